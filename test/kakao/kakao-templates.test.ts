import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { MOCK_KAKAO_CHANNEL } from '../../lib/dispatch/providers/mock-kakao.js'
import { storedAuditEvents, theAuditEvent } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'
import { kakaoClient } from './kakao-fixtures.js'

const ATTENDANCE = {
  providerTemplateId: 'mock-attendance',
  name: '출결 알림',
  content: '[출결 알림] #{name} 학생이 #{time}에 #{className} 수업에 출석했습니다.',
  variables: ['name', 'time', 'className'],
  buttons: [],
  status: 'APPROVED',
}

// The mock provider's fixed catalog belongs to its channel (docs/api.md#importing-templates).
describe('Kakao templates, on the mock provider', () => {
  const app = useTestApp()
  const kakao = kakaoClient(() => app.current)

  async function linkedAcademy(pfId = MOCK_KAKAO_CHANNEL) {
    const people = await academy(app.current)
    expect((await kakao.putChannel(people.owner, { pfId })).statusCode).toBe(200)
    return people
  }

  describe('POST /v1/kakao/templates', () => {
    it('imports a template of the channel with its variables in order of first use (201), then refreshes it (200)', async () => {
      const { tenant, owner, manager } = await linkedAcademy()
      const created = await kakao.importTemplate(manager, { providerTemplateId: 'mock-attendance' })
      expect(created.statusCode).toBe(201)
      const template = created.json()
      expect(template).toEqual({ id: expect.any(Number), ...ATTENDANCE, refreshedAt: expect.any(String) })
      const again = await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })
      expect(again.statusCode).toBe(200)
      expect(again.json()).toMatchObject({ id: template.id, ...ATTENDANCE })
      expect(Date.parse(again.json().refreshedAt)).toBeGreaterThanOrEqual(Date.parse(template.refreshedAt))
      const event = await theAuditEvent(tenant, 'KAKAO_TEMPLATE_IMPORTED')
      expect(event).toMatchObject({ actorId: manager.user.id, targetType: 'KAKAO_TEMPLATE', targetId: String(template.id) })
      expect(event.details).toEqual({ providerTemplateId: 'mock-attendance', name: '출결 알림', status: 'APPROVED' })
    })

    it('keeps buttons as the provider gave them and names a repeated variable once', async () => {
      const { owner } = await linkedAcademy()
      const response = await kakao.importTemplate(owner, { providerTemplateId: 'mock-payment' })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        variables: ['name', 'month', 'amount'],
        buttons: [{ buttonType: 'WL', buttonName: '수업 일정', linkMo: 'https://example.com/schedule', linkPc: 'https://example.com/schedule' }],
        status: 'APPROVED',
      })
      const inspecting = await kakao.importTemplate(owner, { providerTemplateId: 'mock-exam' })
      expect(inspecting.json()).toMatchObject({ status: 'INSPECTING', variables: ['name', 'examName', 'date'] })
    })

    it('answers KAKAO_TEMPLATE_UNKNOWN for an id the provider does not know, and for a template of another channel', async () => {
      const { owner } = await linkedAcademy()
      expectProblem(await kakao.importTemplate(owner, { providerTemplateId: 'no-such-template' }), 409, 'KAKAO_TEMPLATE_UNKNOWN')
      const other = await linkedAcademy('another-channel')
      expectProblem(await kakao.importTemplate(other.owner, { providerTemplateId: 'mock-attendance' }), 409, 'KAKAO_TEMPLATE_UNKNOWN')
      expect((await kakao.listTemplates(other.owner)).json()).toEqual([])
    })

    it('answers KAKAO_CHANNEL_NOT_FOUND while no channel is linked', async () => {
      const { owner } = await academy(app.current)
      expectProblem(await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' }), 404, 'KAKAO_CHANNEL_NOT_FOUND')
    })

    it('is for OWNER and MANAGER: an instructor gets AUTH_008, a student too', async () => {
      const { instructor, student, owner } = await linkedAcademy()
      expectProblem(await kakao.importTemplate(instructor, { providerTemplateId: 'mock-attendance' }), 403, 'AUTH_008')
      expectProblem(await kakao.importTemplate(student, { providerTemplateId: 'mock-attendance' }), 403, 'AUTH_008')
      expect((await kakao.listTemplates(owner)).json()).toEqual([])
    })

    it.each([
      ['no providerTemplateId', {}],
      ['an empty one', { providerTemplateId: '' }],
      ['one over 100 characters', { providerTemplateId: 'a'.repeat(101) }],
      ['one with a path in it', { providerTemplateId: '../channels/x' }],
      ['another field', { providerTemplateId: 'mock-attendance', status: 'APPROVED' }],
    ])('refuses %s with VALIDATION_FAILED', async (_case, payload) => {
      const { owner } = await linkedAcademy()
      expectProblem(await kakao.importTemplate(owner, payload), 400, 'VALIDATION_FAILED')
    })
  })

  describe('GET /v1/kakao/templates and /v1/kakao/templates/{id}', () => {
    it('lists the imported templates newest first, as a plain array, to every staff member', async () => {
      const { owner, instructor } = await linkedAcademy()
      const first = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })).json()
      const second = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-payment' })).json()
      const list = await kakao.listTemplates(instructor)
      expect(list.statusCode).toBe(200)
      expect(list.json()).toEqual([second, first])
      const one = await kakao.getTemplate(instructor, first.id)
      expect(one.statusCode).toBe(200)
      expect(one.json()).toEqual(first)
    })

    it('refuses a student (AUTH_008) and answers KAKAO_TEMPLATE_NOT_FOUND for an unknown id', async () => {
      const { owner, student } = await linkedAcademy()
      expectProblem(await kakao.listTemplates(student), 403, 'AUTH_008')
      expectProblem(await kakao.getTemplate(student, 1), 403, 'AUTH_008')
      expectProblem(await kakao.getTemplate(owner, 999_999_999), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      expectProblem(await kakao.getTemplate(owner, 'abc'), 400, 'VALIDATION_FAILED')
    })
  })

  describe('another tenant', () => {
    it("can neither list, read, refresh nor delete a tenant's template: 404 KAKAO_TEMPLATE_NOT_FOUND", async () => {
      const first = await linkedAcademy()
      const second = await linkedAcademy()
      const template = (await kakao.importTemplate(first.owner, { providerTemplateId: 'mock-attendance' })).json()
      expect((await kakao.listTemplates(second.owner)).json()).toEqual([])
      expectProblem(await kakao.getTemplate(second.owner, template.id), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      expectProblem(await kakao.refreshTemplate(second.owner, template.id), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      expectProblem(await kakao.deleteTemplate(second.owner, template.id), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      expect((await kakao.getTemplate(first.owner, template.id)).json()).toEqual(template)
      const seen = await withTenant(app.current.db, second.tenant.id, (trx) => trx.selectFrom('kakaoTemplates').select('id').execute())
      expect(seen).toEqual([])
    })

    it('imports the same provider template as a row of its own', async () => {
      const first = await linkedAcademy()
      const second = await linkedAcademy()
      const mine = await kakao.importTemplate(first.owner, { providerTemplateId: 'mock-attendance' })
      const theirs = await kakao.importTemplate(second.owner, { providerTemplateId: 'mock-attendance' })
      expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201])
      expect(theirs.json().id).not.toBe(mine.json().id)
    })
  })

  describe('POST /v1/kakao/templates/{id}/refresh', () => {
    it('reads the template again (200) for OWNER and MANAGER, not for an instructor', async () => {
      const { owner, manager, instructor } = await linkedAcademy()
      const template = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-exam' })).json()
      const refreshed = await kakao.refreshTemplate(manager, template.id)
      expect(refreshed.statusCode).toBe(200)
      expect(refreshed.json()).toMatchObject({ id: template.id, providerTemplateId: 'mock-exam', status: 'INSPECTING' })
      expectProblem(await kakao.refreshTemplate(instructor, template.id), 403, 'AUTH_008')
      expectProblem(await kakao.refreshTemplate(owner, 999_999_999), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
    })

    it('answers KAKAO_CHANNEL_NOT_FOUND once the channel is unlinked, and KAKAO_TEMPLATE_UNKNOWN once another is linked', async () => {
      const { owner } = await linkedAcademy()
      const template = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })).json()
      await kakao.deleteChannel(owner)
      expectProblem(await kakao.refreshTemplate(owner, template.id), 404, 'KAKAO_CHANNEL_NOT_FOUND')
      await kakao.putChannel(owner, { pfId: 'another-channel' })
      expectProblem(await kakao.refreshTemplate(owner, template.id), 409, 'KAKAO_TEMPLATE_UNKNOWN')
      expect((await kakao.getTemplate(owner, template.id)).json()).toEqual(template)
    })
  })

  describe('DELETE /v1/kakao/templates/{id}', () => {
    it('removes the template (204) and audits it; a second delete is 404', async () => {
      const { tenant, owner, manager } = await linkedAcademy()
      const template = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })).json()
      expect((await kakao.deleteTemplate(manager, template.id)).statusCode).toBe(204)
      expectProblem(await kakao.getTemplate(owner, template.id), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      expectProblem(await kakao.deleteTemplate(manager, template.id), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      const events = await storedAuditEvents(tenant, 'KAKAO_TEMPLATE_REMOVED')
      expect(events.map((event) => [event.actorId, event.targetId, event.details])).toEqual([
        [manager.user.id, String(template.id), { providerTemplateId: 'mock-attendance', name: '출결 알림' }],
      ])
      // Imported again, it is a new row.
      expect((await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })).statusCode).toBe(201)
    })

    it('is for OWNER and MANAGER only', async () => {
      const { owner, instructor } = await linkedAcademy()
      const template = (await kakao.importTemplate(owner, { providerTemplateId: 'mock-attendance' })).json()
      expectProblem(await kakao.deleteTemplate(instructor, template.id), 403, 'AUTH_008')
      expect((await kakao.getTemplate(owner, template.id)).statusCode).toBe(200)
    })
  })
})
