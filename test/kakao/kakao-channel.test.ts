import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { theAuditEvent, storedAuditEvents } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'
import { kakaoClient } from './kakao-fixtures.js'

// On the mock provider every pfId names a channel whose searchId is the pfId (docs/api.md#linking-the-channel).
describe('the Kakao channel, on the mock provider', () => {
  const app = useTestApp()
  const kakao = kakaoClient(() => app.current)

  describe('GET /v1/kakao/channel', () => {
    it('answers KAKAO_CHANNEL_NOT_FOUND before one is linked, then the channel to every staff member', async () => {
      const people = await academy(app.current)
      expectProblem(await kakao.getChannel(people.instructor), 404, 'KAKAO_CHANNEL_NOT_FOUND')
      expect((await kakao.putChannel(people.owner, { pfId: 'KA01PF-ACADEMY' })).statusCode).toBe(200)
      for (const who of [people.owner, people.manager, people.instructor]) {
        const response = await kakao.getChannel(who)
        expect(response.statusCode).toBe(200)
        expect(response.json()).toEqual({ pfId: 'KA01PF-ACADEMY', searchId: 'KA01PF-ACADEMY' })
      }
    })

    it('requires a token (AUTH_002) and refuses a student (AUTH_008)', async () => {
      const { student } = await academy(app.current)
      expectProblem(await kakao.getChannel(), 401, 'AUTH_002')
      expectProblem(await kakao.getChannel(student), 403, 'AUTH_008')
    })

    it("never shows another tenant's channel", async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await kakao.putChannel(first.owner, { pfId: 'first-channel' })
      expectProblem(await kakao.getChannel(second.owner), 404, 'KAKAO_CHANNEL_NOT_FOUND')
      const rows = await withTenant(app.current.db, second.tenant.id, (trx) => trx.selectFrom('kakaoChannels').selectAll().execute())
      expect(rows).toEqual([])
    })
  })

  describe('PUT /v1/kakao/channel', () => {
    it('links the channel, replaces it with another, and audits each change but not the same pfId again', async () => {
      const { tenant, owner } = await academy(app.current)
      const first = await kakao.putChannel(owner, { pfId: 'channel-one' })
      expect(first.statusCode).toBe(200)
      expect(first.json()).toEqual({ pfId: 'channel-one', searchId: 'channel-one' })
      expect((await kakao.putChannel(owner, { pfId: 'channel-one' })).statusCode).toBe(200)
      expect((await kakao.putChannel(owner, { pfId: 'channel-two' })).json()).toEqual({ pfId: 'channel-two', searchId: 'channel-two' })
      const events = await storedAuditEvents(tenant, 'KAKAO_CHANNEL_LINKED')
      expect(events.map((event) => event.details)).toEqual([
        { pfId: 'channel-one', previousPfId: null },
        { pfId: 'channel-two', previousPfId: 'channel-one' },
      ])
      expect(events[1]).toMatchObject({ actorId: owner.user.id, targetType: 'KAKAO_CHANNEL', targetId: 'channel-two' })
    })

    it('is for the OWNER only: a manager or an instructor gets AUTH_008 and nothing is linked', async () => {
      const { owner, manager, instructor } = await academy(app.current)
      expectProblem(await kakao.putChannel(instructor, { pfId: 'channel-one' }), 403, 'AUTH_008')
      expectProblem(await kakao.putChannel(manager, { pfId: 'channel-one' }), 403, 'AUTH_008')
      expectProblem(await kakao.getChannel(owner), 404, 'KAKAO_CHANNEL_NOT_FOUND')
    })

    it.each([
      ['no pfId', {}],
      ['an empty pfId', { pfId: '' }],
      ['a pfId over 100 characters', { pfId: 'a'.repeat(101) }],
      ['a pfId with a slash', { pfId: 'a/b' }],
      ['a pfId that is not a string', { pfId: 42 }],
      ['another field', { pfId: 'channel-one', searchId: 'mine' }],
    ])('refuses %s with VALIDATION_FAILED', async (_case, payload) => {
      const { owner } = await academy(app.current)
      expectProblem(await kakao.putChannel(owner, payload), 400, 'VALIDATION_FAILED')
      expectProblem(await kakao.getChannel(owner), 404, 'KAKAO_CHANNEL_NOT_FOUND')
    })
  })

  describe('DELETE /v1/kakao/channel', () => {
    it('unlinks the channel with 204 and audits it; unlinking none is 204 too and audits nothing more', async () => {
      const { tenant, owner } = await academy(app.current)
      await kakao.putChannel(owner, { pfId: 'channel-one' })
      expect((await kakao.deleteChannel(owner)).statusCode).toBe(204)
      expectProblem(await kakao.getChannel(owner), 404, 'KAKAO_CHANNEL_NOT_FOUND')
      expect((await kakao.deleteChannel(owner)).statusCode).toBe(204)
      expect((await theAuditEvent(tenant, 'KAKAO_CHANNEL_UNLINKED')).details).toEqual({ pfId: 'channel-one' })
    })

    it('is for the OWNER only', async () => {
      const { owner, manager } = await academy(app.current)
      await kakao.putChannel(owner, { pfId: 'channel-one' })
      expectProblem(await kakao.deleteChannel(manager), 403, 'AUTH_008')
      expect((await kakao.getChannel(owner)).statusCode).toBe(200)
    })
  })
})
