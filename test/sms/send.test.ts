import { describe, expect, it } from 'vitest'
import { owner, unique } from '../support/fixtures.js'
import { buildTestApp, itPostgres, useTestApp } from '../support/helper.js'
import {
  EXTSMS_ENV,
  messageRows,
  minutesFromNow,
  newKey,
  post,
  problem,
  recipientRows,
  recipients,
  send,
  setSender,
} from '../support/sms-send-fixtures.js'
import { academy, actor } from '../support/staff-fixtures.js'
import { recordStatements, RUNTIME_ROLE, RUNTIME_TIMEOUT } from '../support/statement-recorder.js'

const message = (extra: Record<string, unknown> = {}) => ({
  recipients: recipients(2),
  title: 'Notice',
  content: 'Hello {name}',
  ...extra,
})

describe('POST /v1/sms/send', () => {
  const app = useTestApp()

  describe('success', () => {
    it('creates a PENDING message with its recipients and answers 201 with masked phones', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      const response = await send(app.current, sender, {
        recipients: [
          { phone: '010-1234-5678', name: 'Kim', studentId: 7, className: 'Math A', recipientRole: 'GUARDIAN' },
          { phone: '+82 10 8765 4321', name: 'Lee', recipientRole: 'GUARDIAN' },
        ],
        title: 'Notice',
        content: 'Hello {name} of {className}',
      })
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body).toEqual({
        id: expect.any(Number),
        senderId: sender.user.id,
        senderNumber: null,
        recipientType: 'GUARDIAN',
        recipients: [
          { phone: '010-****-5678', name: 'Kim', studentId: 7, className: 'Math A', recipientRole: 'GUARDIAN', deliveryStatus: 'PENDING', deliveredVia: null },
          { phone: '010-****-4321', name: 'Lee', studentId: null, className: null, recipientRole: 'GUARDIAN', deliveryStatus: 'PENDING', deliveredVia: null },
        ],
        recipientCount: 2,
        title: 'Notice',
        recipientGroupId: null,
        content: 'Hello {name} of {className}',
        templateId: null,
        scheduledAt: null,
        cancelledAt: null,
        sentAt: null,
        messageType: 'SMS',
        estimatedSegments: 2,
        unitPrice: 20,
        totalPrice: 40,
        status: 'PENDING',
        successCount: 0,
        failCount: 0,
        purpose: 'INFORMATIONAL',
        optedOutCount: 0,
        noConsentCount: 0,
        channel: 'SMS',
        fallback: null,
        kakaoTemplateId: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      expect(response.body).not.toContain('1234-5678')
      const [stored] = await messageRows(tenant)
      expect(stored).toMatchObject({ id: body.id, senderId: sender.user.id, provider: 'mock', content: 'Hello {name} of {className}' })
      const storedRecipients = await recipientRows(tenant, body.id)
      expect(storedRecipients.map((row) => [row.recipientIndex, row.phone])).toEqual([
        [0, '01012345678'],
        [1, '01087654321'],
      ])
    })

    it.each(['OWNER', 'MANAGER', 'INSTRUCTOR'] as const)('lets %s send, as the sender', async (role) => {
      const { tenant } = await academy(app.current)
      const who = await actor(app.current, tenant, role)
      const response = await send(app.current, who, message())
      expect(response.statusCode).toBe(201)
      expect(response.json().senderId).toBe(who.user.id)
    })

    it('stores a scheduled send as due at its scheduledAt', async () => {
      const { tenant, manager } = await academy(app.current)
      const scheduledAt = minutesFromNow(60)
      const response = await send(app.current, manager, message({ scheduledAt }))
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({ scheduledAt, status: 'PENDING' })
      const [stored] = await messageRows(tenant)
      expect(stored!.nextAttemptAt.toISOString()).toBe(scheduledAt)
    })

    it('infers recipientType from the recipients: common role, else CUSTOM', async () => {
      const { owner: sender } = await academy(app.current)
      const typeOf = async (roles: (string | undefined)[]) => {
        const list = roles.map((recipientRole, index) => ({ phone: `010-1111-000${index}`, recipientRole }))
        return (await send(app.current, sender, message({ recipients: list }))).json().recipientType
      }
      expect(await typeOf(['STUDENT', 'STUDENT'])).toBe('STUDENT')
      expect(await typeOf(['GUARDIAN', 'STUDENT'])).toBe('CUSTOM')
      expect(await typeOf([undefined, undefined])).toBe('CUSTOM')
    })

    it('records an existing template id', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      const template = await owner()
        .insertInto('smsTemplates')
        .values({ tenantId: tenant.id, name: 'T', content: 'c', category: 'GENERAL', createdBy: sender.user.id, updatedAt: new Date() })
        .returning('id')
        .executeTakeFirstOrThrow()
      const response = await send(app.current, sender, message({ templateId: template.id }))
      expect(response.statusCode).toBe(201)
      expect(response.json().templateId).toBe(template.id)
    })

    it('stores the tenant sender number under the mock provider whatever its state, and null without one', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      expect((await send(app.current, sender, message())).json().senderNumber).toBeNull()
      await setSender(tenant, 'PENDING', '0212345678')
      expect((await send(app.current, sender, message())).json().senderNumber).toBe('0212345678')
    })

    it('uses the configured prices', async () => {
      const priced = await buildTestApp({ SVC_SMS_PRICE_SMS: '13', SVC_SMS_PRICE_LMS: '41' })
      try {
        const { owner: sender } = await academy(priced)
        const short = (await send(priced, sender, message({ recipients: recipients(3), content: 'hi' }))).json()
        expect(short).toMatchObject({ messageType: 'SMS', unitPrice: 13, totalPrice: 39, estimatedSegments: 3 })
        const long = (await send(priced, sender, message({ recipients: recipients(3), content: 'x'.repeat(91) }))).json()
        expect(long).toMatchObject({ messageType: 'LMS', unitPrice: 41, totalPrice: 123 })
      } finally {
        await priced.close()
      }
    })
  })

  describe('sizing', () => {
    const sizeOf = async (content: string, list = recipients(1)) => {
      const { owner: sender } = await academy(app.current)
      return send(app.current, sender, message({ content, recipients: list }))
    }

    it.each([
      ['90 ASCII bytes', 'a'.repeat(90), 'SMS'],
      ['91 ASCII bytes', 'a'.repeat(91), 'LMS'],
      ['45 Hangul characters (90 bytes)', '가'.repeat(45), 'SMS'],
      ['46 Hangul characters (92 bytes)', '가'.repeat(46), 'LMS'],
      ['2,000 bytes', 'a'.repeat(2000), 'LMS'],
      ['1,000 Hangul characters (2,000 bytes)', '한'.repeat(1000), 'LMS'],
    ])('%s is %s', async (_label, content, type) => {
      const response = await sizeOf(content)
      expect(response.statusCode).toBe(201)
      expect(response.json().messageType).toBe(type)
      expect(response.json().unitPrice).toBe(type === 'SMS' ? 20 : 50)
    })

    it.each([
      ['2,001 ASCII bytes', 'a'.repeat(2001)],
      ['1,000 Hangul and one more byte', `${'한'.repeat(1000)}a`],
    ])('refuses %s with CONTENT_TOO_LONG', async (_label, content) => {
      expect(problem(await sizeOf(content))).toEqual({ status: 400, code: 'CONTENT_TOO_LONG' })
    })

    it('sizes by the longest personalised rendering, and stores the content unrendered', async () => {
      const content = `${'a'.repeat(80)}{name}`
      const shortNames = await sizeOf(content, [{ phone: '010-1234-5678', name: 'Kim' }])
      expect(shortNames.json().messageType).toBe('SMS')
      const longName = await sizeOf(content, [
        { phone: '010-1234-5678', name: 'Kim' },
        { phone: '010-1234-5679', name: 'Bartholomew' },
      ])
      expect(longName.json()).toMatchObject({ messageType: 'LMS', content })
    })

    it('refuses a rendering that only a long name pushes over 2,000 bytes', async () => {
      const response = await sizeOf(`${'a'.repeat(1995)}{name}`, [{ phone: '010-1234-5678', name: '가나다' }])
      expect(problem(response)).toEqual({ status: 400, code: 'CONTENT_TOO_LONG' })
    })
  })

  describe('recipient groups as the source', () => {
    it('derives the recipients from the caller’s group and stores its id', async () => {
      const { instructor } = await academy(app.current)
      const group = await post(app.current, '/v1/sms/recipient-groups', instructor, {
        name: 'Parents',
        recipients: [
          { phone: '010-2222-3333', name: 'Park', recipientRole: 'PARENT' },
          { phone: '010-4444-5555', name: 'Choi', recipientRole: 'PARENT' },
        ],
      })
      expect(group.statusCode).toBe(201)
      const response = await send(app.current, instructor, { recipientGroupId: group.json().id, title: 't', content: 'Hi {name}' })
      expect(response.statusCode).toBe(201)
      expect(response.json()).toMatchObject({
        recipientGroupId: group.json().id,
        recipientType: 'PARENT',
        recipientCount: 2,
        recipients: [
          { phone: '010-****-3333', name: 'Park', recipientRole: 'PARENT' },
          { phone: '010-****-5555', name: 'Choi', recipientRole: 'PARENT' },
        ],
      })
    })

    it('does not find another staff member’s group (RECIPIENT_GROUP_NOT_FOUND)', async () => {
      const { owner: boss, instructor } = await academy(app.current)
      const group = await post(app.current, '/v1/sms/recipient-groups', instructor, { name: 'Mine', recipients: recipients(1) })
      const response = await send(app.current, boss, { recipientGroupId: group.json().id, title: 't', content: 'c' })
      expect(problem(response)).toEqual({ status: 404, code: 'RECIPIENT_GROUP_NOT_FOUND' })
    })

    it('does not find another tenant’s group or an unknown one', async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      const group = await post(app.current, '/v1/sms/recipient-groups', first.owner, { name: 'G', recipients: recipients(1) })
      const foreign = await send(app.current, second.owner, { recipientGroupId: group.json().id, title: 't', content: 'c' })
      expect(problem(foreign)).toEqual({ status: 404, code: 'RECIPIENT_GROUP_NOT_FOUND' })
      const unknown = await send(app.current, second.owner, { recipientGroupId: 987_654_321, title: 't', content: 'c' })
      expect(problem(unknown)).toEqual({ status: 404, code: 'RECIPIENT_GROUP_NOT_FOUND' })
      expect(await messageRows(second.tenant)).toHaveLength(0)
    })
  })

  describe('rejections', () => {
    it('answers RECIPIENTS_REQUIRED with neither recipients nor a group, or an empty list', async () => {
      const { owner: sender } = await academy(app.current)
      expect(problem(await send(app.current, sender, { title: 't', content: 'c' }))).toEqual({ status: 400, code: 'RECIPIENTS_REQUIRED' })
      expect(problem(await send(app.current, sender, message({ recipients: [] })))).toEqual({ status: 400, code: 'RECIPIENTS_REQUIRED' })
    })

    it('treats a null source as absent', async () => {
      const { owner: sender } = await academy(app.current)
      expect((await send(app.current, sender, message({ recipientGroupId: null }))).statusCode).toBe(201)
      expect(problem(await send(app.current, sender, { recipients: null, title: 't', content: 'c' }))).toEqual({
        status: 400,
        code: 'RECIPIENTS_REQUIRED',
      })
    })

    it('answers RECIPIENTS_CONFLICT for recipients mixed with recipientGroupId', async () => {
      const { owner: sender } = await academy(app.current)
      const response = await send(app.current, sender, message({ recipientGroupId: 1 }))
      expect(problem(response)).toEqual({ status: 400, code: 'RECIPIENTS_CONFLICT' })
    })

    it('answers TOO_MANY_RECIPIENTS above 10,000, before looking at any phone', async () => {
      const { owner: sender } = await academy(app.current)
      const list = [...recipients(10_000), { phone: 'not a phone' }]
      expect(problem(await send(app.current, sender, message({ recipients: list })))).toEqual({ status: 400, code: 'TOO_MANY_RECIPIENTS' })
    })

    it('answers INVALID_PHONE_NUMBER naming the index of the bad recipient', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      const list = [...recipients(3), { phone: '010-12' }]
      const response = await send(app.current, sender, message({ recipients: list }))
      expect(problem(response)).toEqual({ status: 400, code: 'INVALID_PHONE_NUMBER' })
      expect(response.json().detail).toContain('recipients[3].phone')
      expect(response.json().errors).toEqual([{ field: 'recipients[3].phone', message: 'is not a valid phone number' }])
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(await messageRows(tenant)).toHaveLength(0)
    })

    it.each(['', '   ', 'hello', '12345', '010-1234-56789-0', '+1 202 555 0100', '0'.repeat(41), '010-1234-5678\u200b'])('refuses the phone %j', async (phone) => {
      const { owner: sender } = await academy(app.current)
      expect(problem(await send(app.current, sender, message({ recipients: [{ phone }] })))).toEqual({
        status: 400,
        code: 'INVALID_PHONE_NUMBER',
      })
    })

    it('answers SCHEDULED_AT_NOT_IN_FUTURE for a past or present scheduledAt', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      for (const scheduledAt of [minutesFromNow(-5), new Date().toISOString(), '2001-01-01T00:00:00Z']) {
        expect(problem(await send(app.current, sender, message({ scheduledAt })))).toEqual({
          status: 400,
          code: 'SCHEDULED_AT_NOT_IN_FUTURE',
        })
      }
      expect(await messageRows(tenant)).toHaveLength(0)
    })

    it('answers TEMPLATE_NOT_FOUND for a template id that does not exist in the tenant', async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      const foreign = await owner()
        .insertInto('smsTemplates')
        .values({ tenantId: first.tenant.id, name: 'T', content: 'c', category: 'GENERAL', createdBy: first.owner.user.id, updatedAt: new Date() })
        .returning('id')
        .executeTakeFirstOrThrow()
      const response = await send(app.current, second.owner, message({ templateId: foreign.id }))
      expect(problem(response)).toEqual({ status: 404, code: 'TEMPLATE_NOT_FOUND' })
    })

    it('answers IDEMPOTENCY_KEY_MISSING without the header', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      expect(problem(await send(app.current, sender, message(), null))).toEqual({ status: 400, code: 'IDEMPOTENCY_KEY_MISSING' })
      expect(await messageRows(tenant)).toHaveLength(0)
    })

    it('answers AUTH_002 without a token and AUTH_008 for a STUDENT, before looking at the key', async () => {
      const { tenant, student } = await academy(app.current)
      expect(problem(await send(app.current, undefined as never, message()))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await send(app.current, student, message()))).toEqual({ status: 403, code: 'AUTH_008' })
      expect(problem(await send(app.current, student, message(), null))).toEqual({ status: 403, code: 'AUTH_008' })
      expect(await messageRows(tenant)).toHaveLength(0)
    })
  })

  describe('live provider (extsms)', () => {
    const live = useTestApp({ env: EXTSMS_ENV })

    it('answers SENDER_SETTING_NOT_APPROVED without a sender setting or with one not yet approved', async () => {
      const { tenant, owner: sender } = await academy(live.current)
      expect(problem(await send(live.current, sender, message()))).toEqual({ status: 409, code: 'SENDER_SETTING_NOT_APPROVED' })
      await setSender(tenant, 'PENDING')
      expect(problem(await send(live.current, sender, message()))).toEqual({ status: 409, code: 'SENDER_SETTING_NOT_APPROVED' })
      expect(await messageRows(tenant)).toHaveLength(0)
    })

    it('answers SENDER_SETTING_NOT_APPROVED for a REJECTED sender, for scheduled sends too', async () => {
      const { tenant, owner: sender } = await academy(live.current)
      await setSender(tenant, 'REJECTED')
      const response = await send(live.current, sender, message({ scheduledAt: minutesFromNow(30) }))
      expect(problem(response)).toEqual({ status: 409, code: 'SENDER_SETTING_NOT_APPROVED' })
    })

    it('stores the approved number on the message', async () => {
      const { tenant, instructor } = await academy(live.current)
      await setSender(tenant, 'APPROVED', '0212345678')
      const response = await send(live.current, instructor, message({ scheduledAt: minutesFromNow(30) }))
      expect(response.statusCode).toBe(201)
      expect(response.json().senderNumber).toBe('0212345678')
      const [stored] = await messageRows(tenant)
      expect(stored).toMatchObject({ senderNumber: '0212345678', provider: 'extsms' })
    })
  })

  describe('bad input never reaches the handler and never answers 500', () => {
    it.each([
      ['an unknown field', { ...message(), priority: 'high' }],
      ['an unknown recipient field', message({ recipients: [{ phone: '010-1234-5678', email: 'x@y' }] })],
      ['a missing title', { recipients: recipients(1), content: 'c' }],
      ['a blank title', message({ title: '   ' })],
      ['a title over 200 characters', message({ title: 't'.repeat(201) })],
      ['a missing content', { recipients: recipients(1), title: 't' }],
      ['an empty content', message({ content: '' })],
      ['content that is a number', message({ content: 42 })],
      ['recipients that are not an array', message({ recipients: '010-1234-5678' })],
      ['a recipient without a phone', message({ recipients: [{ name: 'x' }] })],
      ['a phone that is a number', message({ recipients: [{ phone: 1012345678 }] })],
      ['a name over 100 characters', message({ recipients: [{ phone: '010-1234-5678', name: 'n'.repeat(101) }] })],
      ['a recipientGroupId that is a string', { recipientGroupId: '5', title: 't', content: 'c' }],
      ['a recipientGroupId beyond 2^53', { recipientGroupId: 2 ** 60, title: 't', content: 'c' }],
      ['a templateId of zero', message({ templateId: 0 })],
      ['a scheduledAt that is not a date-time', message({ scheduledAt: 'tomorrow' })],
      ['a scheduledAt without a zone', message({ scheduledAt: '2030-01-01T10:00:00' })],
      ['an array body', [message()]],
    ])('refuses %s with VALIDATION_FAILED', async (_label, payload) => {
      const { tenant, owner: sender } = await academy(app.current)
      const response = await send(app.current, sender, payload)
      expect(problem(response)).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(await messageRows(tenant)).toHaveLength(0)
    })

    it('refuses malformed JSON and a huge title with 400', async () => {
      const { owner: sender } = await academy(app.current)
      const malformed = await app.current.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...sender.headers, 'idempotency-key': newKey(), 'content-type': 'application/json' },
        payload: '{"title": ',
      })
      expect(problem(malformed)).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      const huge = await send(app.current, sender, message({ title: 'x'.repeat(1_000_000) }))
      expect(problem(huge)).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
    })

    it('refuses an over-long content with CONTENT_TOO_LONG, never a 500', async () => {
      const { owner: sender } = await academy(app.current)
      const response = await send(app.current, sender, message({ content: '가'.repeat(500_000) }))
      expect(problem(response)).toEqual({ status: 400, code: 'CONTENT_TOO_LONG' })
    })
  })

  it('keeps sends of one tenant invisible to another (RLS)', async () => {
    const first = await academy(app.current)
    const second = await academy(app.current)
    const response = await send(app.current, first.owner, message({ title: unique('mine') }))
    expect(response.statusCode).toBe(201)
    const foreign = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${response.json().id}`, headers: second.owner.headers })
    expect(problem(foreign)).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
    expect(await messageRows(second.tenant)).toHaveLength(0)
  })

  describe('10,000 recipients', () => {
    itPostgres('sends to 10,000 recipients with a constant number of statements', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      const recorded = await recordStatements(() =>
        send(app.current, sender, message({ recipients: recipients(10_000), scheduledAt: minutesFromNow(60) })),
      )
      // The role and time limit every transaction sets for itself (db/tenant-transaction.ts) are not the send's work.
      const statements = recorded.statements.filter((text) => text !== RUNTIME_ROLE && !RUNTIME_TIMEOUT.test(text))
      const response = recorded.result
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body).toMatchObject({ recipientCount: 10_000, estimatedSegments: 10_000, totalPrice: 200_000 })
      expect(body.recipients).toHaveLength(10_000)
      expect(body.recipients[9_999]).toMatchObject({ phone: '010-****-9999', name: 'Student 9999' })
      // Claim (find + insert), tenant scope, sender setting, message, recipients, completion, the audit event: no
      // per-row work.
      expect(statements.length).toBeLessThan(16)
      expect(statements.filter((statement) => statement.includes('sms_recipients'))).toHaveLength(1)
      expect(statements.filter((statement) => statement.includes('audit_events'))).toHaveLength(1)
      const stored = await owner()
        .selectFrom('smsRecipients')
        .select((eb) => [eb.fn.countAll<string>().as('count'), eb.fn.max('recipientIndex').as('last')])
        .where('tenantId', '=', tenant.id)
        .where('smsId', '=', body.id)
        .executeTakeFirstOrThrow()
      expect({ count: Number(stored.count), last: stored.last }).toEqual({ count: 10_000, last: 9_999 })
    })
  })
})
