import { describe, expect, it } from 'vitest'
import { owner as ownerDb } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { keyRows, newKey, phones, post, problem, recipients } from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'

describe('recipient groups', () => {
  const app = useTestApp()
  const create = (who: Actor | undefined, payload: unknown, key?: string | null) =>
    post(app.current, '/v1/sms/recipient-groups', who, payload, key)
  const list = (who: Actor | undefined) =>
    app.current.inject({ method: 'GET', url: '/v1/sms/recipient-groups', headers: who?.headers ?? {} })
  const detail = (who: Actor | undefined, id: number | string) =>
    app.current.inject({ method: 'GET', url: `/v1/sms/recipient-groups/${id}`, headers: who?.headers ?? {} })
  const groupRows = (tenantId: number) =>
    ownerDb().selectFrom('recipientGroups').selectAll().where('tenantId', '=', tenantId).execute()

  describe('POST /v1/sms/recipient-groups', () => {
    it('creates the group with its members and answers 201 with masked phones', async () => {
      const { tenant, instructor } = await academy(app.current)
      const response = await create(instructor, {
        name: 'Grade 3 parents',
        icon: 'users',
        recipients: [
          { phone: '010-1234-5678', name: 'Kim', studentId: 11, className: '3A', recipientRole: 'PARENT' },
          { phone: '02-1234-5678', name: 'Office' },
        ],
      })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toEqual({
        id: expect.any(Number),
        name: 'Grade 3 parents',
        icon: 'users',
        recipientCount: 2,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        recipients: [
          { phone: '010-****-5678', name: 'Kim', studentId: 11, className: '3A', recipientRole: 'PARENT', deliveryStatus: null, deliveredVia: null },
          { phone: '021-****-5678', name: 'Office', studentId: null, className: null, recipientRole: null, deliveryStatus: null, deliveredVia: null },
        ],
      })
      const [group] = await groupRows(tenant.id)
      expect(group).toMatchObject({ ownerStaffId: instructor.user.id, recipientCount: 2 })
      const members = await ownerDb()
        .selectFrom('recipientGroupMembers')
        .selectAll()
        .where('tenantId', '=', tenant.id)
        .orderBy('memberIndex')
        .execute()
      expect(members.map((m) => [m.memberIndex, m.phone, m.name, m.studentId, m.className, m.recipientRole])).toEqual([
        [0, '01012345678', 'Kim', 11, '3A', 'PARENT'],
        [1, '0212345678', 'Office', null, null, null],
      ])
    })

    it.each(['OWNER', 'MANAGER', 'INSTRUCTOR'] as const)('lets %s create a group', async (role) => {
      const { tenant } = await academy(app.current)
      const who = await actor(app.current, tenant, role)
      const response = await create(who, { name: 'G', recipients: recipients(1) })
      expect(response.statusCode).toBe(201)
      expect(response.json().icon).toBeNull()
    })

    it('stores 10,000 members in one go', async () => {
      const { owner } = await academy(app.current)
      const response = await create(owner, { name: 'Everyone', recipients: recipients(10_000) })
      expect(response.statusCode).toBe(201)
      expect(response.json().recipientCount).toBe(10_000)
    })

    it('replays a repeated key without a second group', async () => {
      const { tenant, owner } = await academy(app.current)
      const key = newKey()
      const payload = { name: 'Once', recipients: recipients(2) }
      const first = await create(owner, payload, key)
      const again = await create(owner, payload, key)
      expect(again.statusCode).toBe(201)
      expect(again.headers['idempotent-replayed']).toBe('true')
      expect(again.json()).toEqual(first.json())
      expect(await groupRows(tenant.id)).toHaveLength(1)
      expect(problem(await create(owner, { ...payload, name: 'Twice' }, key))).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
    })

    it('answers RECIPIENTS_REQUIRED, TOO_MANY_RECIPIENTS and INVALID_PHONE_NUMBER, leaving nothing behind', async () => {
      const { tenant, owner } = await academy(app.current)
      expect(problem(await create(owner, { name: 'G', recipients: [] }))).toEqual({ status: 400, code: 'RECIPIENTS_REQUIRED' })
      expect(problem(await create(owner, { name: 'G', recipients: recipients(10_001) }))).toEqual({
        status: 400,
        code: 'TOO_MANY_RECIPIENTS',
      })
      const bad = await create(owner, { name: 'G', recipients: [...recipients(1), { phone: '1234' }] })
      expect(problem(bad)).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
      expect(bad.json().detail).toContain('recipients[1].phone')
      const overLong = await create(owner, { name: 'G', recipients: [...recipients(2), { phone: '0'.repeat(41) }] })
      expect(problem(overLong)).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
      expect(overLong.json().detail).toContain('recipients[2].phone')
      expect(await groupRows(tenant.id)).toHaveLength(0)
      expect(await keyRows(tenant)).toHaveLength(0)
    })

    it('answers IDEMPOTENCY_KEY_MISSING, AUTH_002 and AUTH_008', async () => {
      const { owner, student } = await academy(app.current)
      const payload = { name: 'G', recipients: recipients(1) }
      expect(problem(await create(owner, payload, null))).toEqual({ status: 400, code: 'IDEMPOTENCY_KEY_MISSING' })
      expect(problem(await create(undefined, payload))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await create(student, payload))).toEqual({ status: 403, code: 'AUTH_008' })
    })

    it.each([
      ['a missing name', { recipients: recipients(1) }],
      ['a blank name', { name: ' ', recipients: recipients(1) }],
      ['a name over 100 characters', { name: 'n'.repeat(101), recipients: recipients(1) }],
      ['an icon over 50 characters', { name: 'G', icon: 'i'.repeat(51), recipients: recipients(1) }],
      ['missing recipients', { name: 'G' }],
      ['an unknown field', { name: 'G', recipients: recipients(1), color: 'red' }],
      ['a recipient with a numeric phone', { name: 'G', recipients: [{ phone: 1012345678 }] }],
      ['a studentId that is a string', { name: 'G', recipients: [{ phone: '010-1234-5678', studentId: 'x' }] }],
    ])('refuses %s with VALIDATION_FAILED', async (_label, payload) => {
      const { owner } = await academy(app.current)
      expect(problem(await create(owner, payload))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
    })
  })

  describe('GET /v1/sms/recipient-groups', () => {
    it('lists only the caller’s groups, newest first, without any phone data', async () => {
      const { tenant, owner, instructor } = await academy(app.current)
      const older = await create(instructor, { name: 'Older', icon: 'a', recipients: recipients(3) })
      const newer = await create(instructor, { name: 'Newer', recipients: recipients(1) })
      await create(owner, { name: 'Not yours', recipients: recipients(1) })
      const other = await academy(app.current)
      await create(other.instructor, { name: 'Other tenant', recipients: recipients(1) })
      expect(tenant.id).not.toBe(other.tenant.id)

      const response = await list(instructor)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual([
        { id: newer.json().id, name: 'Newer', icon: null, recipientCount: 1, createdAt: expect.any(String), updatedAt: expect.any(String) },
        { id: older.json().id, name: 'Older', icon: 'a', recipientCount: 3, createdAt: expect.any(String), updatedAt: expect.any(String) },
      ])
      expect(response.body).not.toMatch(/phone|recipients"|\*\*\*\*/)
    })

    it('answers an empty list to staff without groups, AUTH_002 and AUTH_008', async () => {
      const { manager, student } = await academy(app.current)
      expect((await list(manager)).json()).toEqual([])
      expect(problem(await list(undefined))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await list(student))).toEqual({ status: 403, code: 'AUTH_008' })
    })
  })

  describe('GET /v1/sms/recipient-groups/{id}', () => {
    it('shows the owner its group with members in order and phones masked', async () => {
      const { manager } = await academy(app.current)
      const created = await create(manager, { name: 'G', recipients: phones(3).map((phone) => ({ phone })) })
      const response = await detail(manager, created.json().id)
      expect(response.statusCode).toBe(200)
      expect(response.json().recipients.map((r: { phone: string }) => r.phone)).toEqual([
        '010-****-0000',
        '010-****-0001',
        '010-****-0002',
      ])
      expect(response.json()).toEqual(created.json())
    })

    it('answers RECIPIENT_GROUP_NOT_FOUND to other staff (even the OWNER), other tenants and unknown ids', async () => {
      const { owner, manager, instructor } = await academy(app.current)
      const other = await academy(app.current)
      const id = (await create(instructor, { name: 'Mine', recipients: recipients(1) })).json().id
      for (const who of [owner, manager, other.owner, other.instructor]) {
        expect(problem(await detail(who, id))).toEqual({ status: 404, code: 'RECIPIENT_GROUP_NOT_FOUND' })
      }
      expect(problem(await detail(instructor, 987_654_321))).toEqual({ status: 404, code: 'RECIPIENT_GROUP_NOT_FOUND' })
    })

    it('answers VALIDATION_FAILED for a bad id, AUTH_002 and AUTH_008', async () => {
      const { owner, student } = await academy(app.current)
      expect(problem(await detail(owner, 'abc'))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(problem(await detail(owner, -1))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(problem(await detail(undefined, 1))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await detail(student, 1))).toEqual({ status: 403, code: 'AUTH_008' })
    })
  })
})
