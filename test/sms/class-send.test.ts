import { describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'
import {
  createClass,
  enrol,
  EXTSMS_ENV,
  keyRows,
  messageRows,
  minutesFromNow,
  newKey,
  post,
  problem,
  recipientRows,
  setSender,
} from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'

const body = (extra: Record<string, unknown> = {}) => ({ title: 'Class notice', content: 'Dear guardian of {name} ({className})', ...extra })

describe('POST /v1/sms/send/class/{classId}', () => {
  const app = useTestApp()
  const classSend = (who: Actor | undefined, classId: number | string, payload: unknown = body(), key?: string | null) =>
    post(app.current, `/v1/sms/send/class/${classId}`, who, payload, key)

  it('sends to the guardians of every ACTIVE enrolment with a phone, named after the students', async () => {
    const { tenant, manager } = await academy(app.current)
    const math = await createClass(tenant, 'Math A')
    const kim = await enrol(tenant, math.id, { name: 'Kim Minji', guardianPhone: '010-1234-5678' })
    const lee = await enrol(tenant, math.id, { name: 'Lee Junho', guardianPhone: '+82 10 8765 4321' })
    await enrol(tenant, math.id, { name: 'Left', guardianPhone: '010-9999-0000', status: 'INACTIVE' })
    await enrol(tenant, math.id, { name: 'No phone', guardianPhone: null })
    await enrol(tenant, math.id, { name: 'Blank phone', guardianPhone: '  ' })
    const other = await createClass(tenant, 'Math B')
    await enrol(tenant, other.id, { name: 'Elsewhere' })

    const response = await classSend(manager, math.id)
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({
      senderId: manager.user.id,
      recipientType: 'GUARDIAN',
      recipientCount: 2,
      recipientGroupId: null,
      content: 'Dear guardian of {name} ({className})',
      status: 'PENDING',
      recipients: [
        { phone: '010-****-5678', name: 'Kim Minji', studentId: kim.studentId, className: 'Math A', recipientRole: 'GUARDIAN', deliveryStatus: 'PENDING' },
        { phone: '010-****-4321', name: 'Lee Junho', studentId: lee.studentId, className: 'Math A', recipientRole: 'GUARDIAN', deliveryStatus: 'PENDING' },
      ],
    })
    const stored = await recipientRows(tenant, response.json().id)
    expect(stored.map((row) => row.phone)).toEqual(['01012345678', '01087654321'])
  })

  it.each(['OWNER', 'MANAGER', 'INSTRUCTOR'] as const)('lets %s send to a class', async (role) => {
    const { tenant } = await academy(app.current)
    const who = await actor(app.current, tenant, role)
    const math = await createClass(tenant)
    await enrol(tenant, math.id)
    expect((await classSend(who, math.id)).statusCode).toBe(201)
  })

  it('supports scheduledAt, and refuses one that is not in the future', async () => {
    const { tenant, instructor } = await academy(app.current)
    const math = await createClass(tenant)
    await enrol(tenant, math.id)
    const scheduledAt = minutesFromNow(90)
    const scheduled = await classSend(instructor, math.id, body({ scheduledAt }))
    expect(scheduled.statusCode).toBe(201)
    expect(scheduled.json().scheduledAt).toBe(scheduledAt)
    const past = await classSend(instructor, math.id, body({ scheduledAt: minutesFromNow(-1) }))
    expect(problem(past)).toEqual({ status: 400, code: 'SCHEDULED_AT_NOT_IN_FUTURE' })
  })

  it('sizes by the longest rendering with the students’ names', async () => {
    const { tenant, owner } = await academy(app.current)
    const math = await createClass(tenant, 'M')
    await enrol(tenant, math.id, { name: 'Kim' })
    const content = `${'a'.repeat(85)}{name}`
    expect((await classSend(owner, math.id, body({ content }))).json().messageType).toBe('SMS')
    await enrol(tenant, math.id, { name: '김민지' })
    expect((await classSend(owner, math.id, body({ content }))).json().messageType).toBe('LMS')
  })

  it('answers CLASS_NOT_FOUND for an unknown class and for another tenant’s class', async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    const foreign = await createClass(first.tenant)
    await enrol(first.tenant, foreign.id)
    expect(problem(await classSend(second.owner, foreign.id))).toEqual({ status: 404, code: 'CLASS_NOT_FOUND' })
    expect(problem(await classSend(second.owner, 987_654_321))).toEqual({ status: 404, code: 'CLASS_NOT_FOUND' })
    expect(await messageRows(second.tenant)).toHaveLength(0)
    expect(await keyRows(second.tenant)).toHaveLength(0)
  })

  it('answers CLASS_HAS_NO_STUDENTS when nobody active with a guardian phone is enrolled', async () => {
    const { tenant, owner } = await academy(app.current)
    const empty = await createClass(tenant)
    expect(problem(await classSend(owner, empty.id))).toEqual({ status: 400, code: 'CLASS_HAS_NO_STUDENTS' })
    const unreachable = await createClass(tenant)
    await enrol(tenant, unreachable.id, { status: 'INACTIVE' })
    await enrol(tenant, unreachable.id, { guardianPhone: null })
    expect(problem(await classSend(owner, unreachable.id))).toEqual({ status: 400, code: 'CLASS_HAS_NO_STUDENTS' })
  })

  it('answers INVALID_PHONE_NUMBER naming the student whose guardian phone is not a number', async () => {
    const { tenant, owner } = await academy(app.current)
    const math = await createClass(tenant)
    await enrol(tenant, math.id)
    const broken = await enrol(tenant, math.id, { guardianPhone: 'call the office' })
    const response = await classSend(owner, math.id)
    expect(problem(response)).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
    expect(response.json().detail).toContain(`student ${broken.studentId}`)
    expect(await messageRows(tenant)).toHaveLength(0)
  })

  it('answers CONTENT_TOO_LONG over 2,000 bytes', async () => {
    const { tenant, owner } = await academy(app.current)
    const math = await createClass(tenant)
    await enrol(tenant, math.id)
    expect(problem(await classSend(owner, math.id, body({ content: 'a'.repeat(2001) })))).toEqual({
      status: 400,
      code: 'CONTENT_TOO_LONG',
    })
  })

  it('answers AUTH_002 without a token, AUTH_008 for a STUDENT and IDEMPOTENCY_KEY_MISSING without a key', async () => {
    const { tenant, owner, student } = await academy(app.current)
    const math = await createClass(tenant)
    await enrol(tenant, math.id)
    expect(problem(await classSend(undefined, math.id))).toEqual({ status: 401, code: 'AUTH_002' })
    expect(problem(await classSend(student, math.id))).toEqual({ status: 403, code: 'AUTH_008' })
    expect(problem(await classSend(owner, math.id, body(), null))).toEqual({ status: 400, code: 'IDEMPOTENCY_KEY_MISSING' })
    expect(await messageRows(tenant)).toHaveLength(0)
  })

  it.each([
    ['a class id that is not a number', 'abc', body()],
    ['a class id of zero', 0, body()],
    ['a class id beyond 2^53', '99999999999999999999', body()],
    ['inline recipients', 1, body({ recipients: [{ phone: '010-1234-5678' }] })],
    ['a recipientGroupId', 1, body({ recipientGroupId: 1 })],
    ['a missing title', 1, { content: 'c' }],
    ['a title that is an object', 1, body({ title: { text: 'x' } })],
  ])('refuses %s with VALIDATION_FAILED', async (_label, classId, payload) => {
    const { owner } = await academy(app.current)
    expect(problem(await classSend(owner, classId, payload))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
  })

  it('replays a repeated key and refuses the same key for another class', async () => {
    const { tenant, owner } = await academy(app.current)
    const math = await createClass(tenant)
    const art = await createClass(tenant)
    await enrol(tenant, math.id)
    await enrol(tenant, art.id)
    const key = newKey()
    const first = await classSend(owner, math.id, body({ scheduledAt: minutesFromNow(60) }), key)
    const again = await classSend(owner, math.id, body({ scheduledAt: first.json().scheduledAt }), key)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json().id).toBe(first.json().id)
    const otherClass = await classSend(owner, art.id, body({ scheduledAt: first.json().scheduledAt }), key)
    expect(problem(otherClass)).toEqual({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
    expect(await messageRows(tenant)).toHaveLength(1)
  })

  describe('live provider (extsms)', () => {
    const live = useTestApp({ env: EXTSMS_ENV })

    it('answers SENDER_SETTING_NOT_APPROVED until the sender is approved', async () => {
      const { tenant, owner } = await academy(live.current)
      const math = await createClass(tenant)
      await enrol(tenant, math.id)
      const url = `/v1/sms/send/class/${math.id}`
      const payload = body({ scheduledAt: minutesFromNow(60) })
      expect(problem(await post(live.current, url, owner, payload))).toEqual({ status: 409, code: 'SENDER_SETTING_NOT_APPROVED' })
      await setSender(tenant, 'APPROVED', '15881234')
      const response = await post(live.current, url, owner, payload)
      expect(response.statusCode).toBe(201)
      expect(response.json().senderNumber).toBe('15881234')
    })
  })
})
