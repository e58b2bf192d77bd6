import { createHmac } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseDeliveryReports } from '../../../lib/dispatch/delivery/delivery-report.js'
import { authorizationHeader } from '../../../lib/dispatch/providers/extsms-auth.js'
import { until } from '../auth-fixtures.js'
import {
  deliveryReport,
  deliveryReportBody,
  providerSecretHeader,
  providerId,
  startFakeExtSms,
  type FakeExtSms,
} from './extsms-server.js'

const credentials = { apiKey: 'fake-key', apiSecret: 'fake-secret' }
const GROUPS = '/messages/v4/groups'

function smsBody(count = 1, overrides: Record<string, unknown> = {}) {
  return {
    messages: Array.from({ length: count }, (_, index) => ({
      to: '01012345678',
      from: '0212345678',
      text: 'hello',
      type: 'SMS',
      customFields: { svcTenant: 'acme', svcSmsId: '1', svcRecipient: String(index) },
      ...overrides,
    })),
  }
}

describe('fake extsms server', () => {
  let fake: FakeExtSms

  beforeEach(async () => {
    fake = await startFakeExtSms(credentials)
  })

  afterEach(async () => {
    await fake.close()
  })

  const sign = () => authorizationHeader(credentials.apiKey, credentials.apiSecret)

  async function call(method: string, path: string, body?: unknown, authorization = sign(), signal?: AbortSignal) {
    const response = await fetch(`${fake.url}${path}`, {
      method,
      headers: { authorization, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }

  const create = (authorization?: string) => call('POST', GROUPS, { allowDuplicates: true }, authorization)
  async function newGroup(): Promise<string> {
    const { body } = await create()
    return body.groupId as string
  }
  const add = (groupId: string, body: unknown) => call('PUT', `${GROUPS}/${groupId}/messages`, body)
  const send = (groupId: string) => call('POST', `${GROUPS}/${groupId}/send`)

  it('creates, fills and sends a group once; nothing goes out before the send', async () => {
    const created = await create()
    expect(created).toMatchObject({ status: 200, body: { groupId: expect.stringMatching(/^G4V/), status: 'PENDING' } })
    const groupId = created.body.groupId as string

    const added = await add(groupId, smsBody(2))
    expect(added).toMatchObject({ status: 200, body: { errorCount: 0 } })
    expect(added.body.resultList).toMatchObject([
      { statusCode: '2000', messageId: expect.stringMatching(/^M4V/), customFields: { svcRecipient: '0' } },
      { statusCode: '2000', customFields: { svcRecipient: '1' } },
    ])
    expect(fake.sentMessages).toEqual([])
    expect((await call('GET', `${GROUPS}/${groupId}`)).body).toMatchObject({ status: 'PENDING', count: { total: 2 } })

    expect(await send(groupId)).toMatchObject({ status: 200, body: { status: 'SENDING' } })
    expect(fake.sentMessages.map((sent) => sent.customFields.svcRecipient)).toEqual(['0', '1'])
    expect(await send(groupId)).toMatchObject({ status: 400, body: { errorCode: 'GroupAlreadySent' } })
    expect((await add(groupId, smsBody(1))).status).toBe(400)
    expect(fake.sentMessages).toHaveLength(2)
  })

  it("pages a group's messages by nextKey, and answers 404 for an unknown group", async () => {
    const groupId = await newGroup()
    await add(groupId, smsBody(3))
    const first = await call('GET', `${GROUPS}/${groupId}/messages?limit=2`)
    expect(Object.keys(first.body.messageList)).toHaveLength(2)
    const second = await call('GET', `${GROUPS}/${groupId}/messages?limit=2&startKey=${first.body.nextKey}`)
    expect(Object.keys(second.body.messageList)).toHaveLength(1)
    expect(second.body.nextKey).toBeNull()
    expect((await call('GET', `${GROUPS}/G4V20260101000000AAAAAAAAAAAAAAA`)).status).toBe(404)
  })

  it('pages 20 messages when no limit is asked, and at most 500', async () => {
    const groupId = await newGroup()
    await add(groupId, smsBody(501))
    const plain = await call('GET', `${GROUPS}/${groupId}/messages`)
    expect(Object.keys(plain.body.messageList)).toHaveLength(20)
    expect(plain.body.nextKey).toBe(fake.groups.get(groupId)!.messages[20]!.messageId)
    const capped = await call('GET', `${GROUPS}/${groupId}/messages?limit=1000`)
    expect(Object.keys(capped.body.messageList)).toHaveLength(500)
    expect(capped.body.nextKey).toBe(fake.groups.get(groupId)!.messages[500]!.messageId)
  })

  it("lists a group's messages with their echo, or SDK-shaped without it while such a refusal is set", async () => {
    const groupId = await newGroup()
    await add(groupId, smsBody(1))
    const [echoed] = Object.values((await call('GET', `${GROUPS}/${groupId}/messages`)).body.messageList) as Record<string, unknown>[]
    expect(echoed).toMatchObject({ groupId, statusCode: '2000', customFields: { svcRecipient: '0' } })

    fake.fail({ refuse: () => null, omitCustomFields: true })
    const [bare] = Object.values((await call('GET', `${GROUPS}/${groupId}/messages`)).body.messageList) as Record<string, unknown>[]
    expect(bare).toMatchObject({ groupId, statusCode: '2000', to: '01012345678', country: '82' })
    expect(bare).not.toHaveProperty('customFields')
  })

  it('rejects a missing, malformed or wrongly signed header with 403', async () => {
    const date = new Date().toISOString()
    const salt = 'abcdefghijklmnop'
    const wrong = createHmac('sha256', 'nope').update(date + salt).digest('hex')

    expect((await create('')).body.errorCode).toBe('InvalidAPIKey')
    expect((await create('Bearer x')).status).toBe(403)
    const forged = `HMAC-SHA256 apiKey=fake-key, date=${date}, salt=${salt}, signature=${wrong}`
    expect(await create(forged)).toMatchObject({ status: 403, body: { errorCode: 'SignatureDoesNotMatch' } })
    expect(fake.groups.size).toBe(0)
  })

  it('serves the Kakao channels and templates a test registered, signed like every call, and 404 for others', async () => {
    fake.kakao.addChannel('KA01PF-ONE', '@one')
    fake.kakao.putTemplate({ templateId: 'KA01TP-ONE', channelId: 'KA01PF-ONE', name: 'n', content: '#{a} #{b} #{a}', status: 'APPROVED' })
    expect(await call('GET', '/kakao/v2/channels/KA01PF-ONE')).toMatchObject({ status: 200, body: { channelId: 'KA01PF-ONE', searchId: '@one' } })
    const template = await call('GET', '/kakao/v2/templates/KA01TP-ONE')
    expect(template).toMatchObject({ status: 200, body: { templateId: 'KA01TP-ONE', channelId: 'KA01PF-ONE', status: 'APPROVED' } })
    expect(template.body.variables).toEqual([{ name: '#{a}' }, { name: '#{b}' }])
    expect(template.body).not.toHaveProperty('buttons')
    expect((await call('GET', '/kakao/v2/channels/KA01PF-TWO')).status).toBe(404)
    expect((await call('GET', '/kakao/v2/templates/KA01TP-TWO')).status).toBe(404)
    expect(await call('GET', '/kakao/v2/channels/KA01PF-ONE', undefined, '')).toMatchObject({ status: 403, body: { errorCode: 'InvalidAPIKey' } })
  })

  it('rejects a reused signature', async () => {
    const header = sign()

    expect((await create(header)).status).toBe(200)
    expect(await create(header)).toMatchObject({ status: 403, body: { errorCode: 'DuplicatedSignature' } })
  })

  it('allows 15 minutes of clock skew and no more', async () => {
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000)
    const signAt = (date: Date) => authorizationHeader(credentials.apiKey, credentials.apiSecret, date)

    expect((await create(signAt(at(-14)))).status).toBe(200)
    expect((await create(signAt(at(14)))).status).toBe(200)
    expect((await create(signAt(at(-16)))).body.errorCode).toBe('RequestTimeTooSkewed')
    expect((await create(signAt(at(16)))).body.errorCode).toBe('RequestTimeTooSkewed')
  })

  it('validates the body of an add', async () => {
    const groupId = await newGroup()
    expect(await add(groupId, '{not json')).toMatchObject({ status: 400, body: { errorCode: 'ValidationError' } })
    expect((await add(groupId, { messages: [] })).status).toBe(400)
    expect((await add(groupId, smsBody(1, { to: '010-1234-5678' }))).status).toBe(400)
    expect((await add(groupId, smsBody(1, { subject: 'no subject on SMS' }))).status).toBe(400)
    expect(await add(groupId, smsBody(10_001))).toMatchObject({ status: 413, body: { errorCode: 'RecipientsTooMany' } })
  })

  it('refuses an SMS that is too long or carries an emoji at the add, as the provider does, and never sends it', async () => {
    const groupId = await newGroup()
    const { body } = await add(groupId, {
      messages: [smsBody(1, { text: 'a'.repeat(91) }).messages[0], smsBody(1, { text: 'hi 😀' }).messages[0]],
    })
    expect(body).toMatchObject({ errorCount: 2, resultList: [{ statusCode: '1031' }, { statusCode: '1029' }] })
    await send(groupId)
    expect(fake.sentMessages).toEqual([])
  })

  describe('AlimTalk notices (ATA)', () => {
    const CONTENT = '#{name} 학생 출석 확인: #{time}'
    const ata = (index: number, text: string, overrides: Record<string, unknown> = {}) => ({
      to: `0101234${String(5000 + index)}`,
      from: '0212345678',
      text,
      type: 'ATA',
      kakaoOptions: { pfId: 'PF1', templateId: 'KA01', variables: { '#{name}': '김민준', '#{time}': '15:00' }, ...overrides },
      customFields: { svcTenant: 'acme', svcSmsId: '1', svcRecipient: String(index) },
    })
    const rendered = '김민준 학생 출석 확인: 15:00'

    beforeEach(() => {
      fake.kakao.putTemplate({ templateId: 'KA01', channelId: 'PF1', name: 'attendance', content: CONTENT, status: 'APPROVED' })
      fake.kakao.putTemplate({ templateId: 'KA02', channelId: 'PF1', name: 'inspecting', content: CONTENT, status: 'INSPECTING' })
    })

    it('takes a notice whose text is its approved template with the variables substituted', async () => {
      const groupId = await newGroup()
      const { body } = await add(groupId, { messages: [ata(0, rendered)] })
      expect(body).toMatchObject({ errorCount: 0, resultList: [{ statusCode: '2000' }] })
      await send(groupId)
      expect(fake.sentMessages).toMatchObject([{ type: 'ATA', text: rendered, kakaoOptions: { pfId: 'PF1', templateId: 'KA01' } }])
    })

    it('refuses a text one character off the template (3108) and a template not approved, unknown or of another channel (3016)', async () => {
      const groupId = await newGroup()
      const { body } = await add(groupId, {
        messages: [
          ata(0, `${rendered}.`),
          ata(1, rendered, { templateId: 'KA02' }),
          ata(2, rendered, { templateId: 'KA99' }),
          ata(3, rendered, { pfId: 'PF2' }),
        ],
      })
      expect(body.resultList.map((entry: { statusCode: string }) => entry.statusCode)).toEqual(['3108', '3016', '3016', '3016'])
      await send(groupId)
      expect(fake.sentMessages).toEqual([])
    })

    it('validates kakaoOptions: only with ATA, string variables', async () => {
      const groupId = await newGroup()
      expect((await add(groupId, { messages: [{ ...ata(0, rendered), kakaoOptions: undefined }] })).status).toBe(400)
      expect((await add(groupId, { messages: [ata(0, rendered, { variables: { '#{name}': 7 } })] })).status).toBe(400)
      expect((await add(groupId, smsBody(1, { kakaoOptions: { pfId: 'PF1', templateId: 'KA01' } }))).status).toBe(400)
    })

    it('reports Kakao deliveries as ATA, a failing number by its SMS or LMS fallback, or as a failed ATA without one', async () => {
      const long = 'x'.repeat(90)
      fake.kakao.putTemplate({ templateId: 'KA03', channelId: 'PF1', name: 'long', content: `#{name} ${long}`, status: 'APPROVED' })
      fake.kakao.failFor(['01012345001', '01012345002', '01012345003'])
      const groupId = await newGroup()
      await add(groupId, {
        messages: [
          ata(0, rendered),
          ata(1, rendered),
          ata(2, `김민준 ${long}`, { templateId: 'KA03' }),
          ata(3, rendered, { disableSms: true }),
          smsBody(1).messages[0],
        ],
      })
      await send(groupId)
      expect(fake.sentMessages.map((message) => fake.outcomeOf(message))).toEqual([
        { type: 'ATA', statusCode: '4000' },
        { type: 'SMS', statusCode: '4000' },
        { type: 'LMS', statusCode: '4000' },
        { type: 'ATA', statusCode: '3104' },
        { type: 'SMS', statusCode: '4000' },
      ])
      const parsed = parseDeliveryReports(fake.sentMessages.map((message) => fake.reportOf(message)))
      expect(parsed.map((entry) => entry.ok && [entry.report.type, entry.report.statusCode, entry.report.messageId])).toEqual(
        fake.sentMessages.map((message) => [fake.outcomeOf(message).type, fake.outcomeOf(message).statusCode, message.messageId]),
      )
    })
  })

  it('answers 404 for another path', async () => {
    const response = await fetch(`${fake.url}/messages/v4/list`)
    expect(response.status).toBe(404)
  })

  it('applies a fault to the calls of its phase (create by default) for the given number, then recovers', async () => {
    const groupId = await newGroup()
    fake.fail({ status: 503 }, 2)
    expect((await add(groupId, smsBody())).status).toBe(200)
    expect((await create()).status).toBe(503)
    expect((await create()).status).toBe(503)
    expect((await create()).status).toBe(200)

    fake.fail({ status: 502, phase: 'send' }, 1)
    expect((await send(groupId)).status).toBe(502)
    expect(fake.sentMessages).toEqual([])
    expect((await send(groupId)).status).toBe(200)
  })

  it('applies a read fault to the group and to its pages, and a refusal to adds only', async () => {
    const groupId = await newGroup()
    fake.fail({ refuse: () => '1062' }, 1)
    expect((await create()).status).toBe(200)
    expect((await add(groupId, smsBody(1))).body).toMatchObject({ errorCount: 1, resultList: [{ statusCode: '1062' }] })
    expect((await add(groupId, smsBody(1))).body).toMatchObject({ errorCount: 0 })

    fake.fail({ status: 503, phase: 'read' }, 2)
    expect((await call('GET', `${GROUPS}/${groupId}`)).status).toBe(503)
    expect((await call('GET', `${GROUPS}/${groupId}/messages`)).status).toBe(503)
    expect((await call('GET', `${GROUPS}/${groupId}/messages`)).status).toBe(200)
  })

  it('applies a fault without a count until reset', async () => {
    fake.fail({ status: 400, errorCode: 'ValidationError' })

    expect((await create()).status).toBe(400)
    expect((await create()).status).toBe(400)
    fake.reset()
    expect((await create()).status).toBe(200)
    expect(fake.calls.map((each) => each.status)).toEqual([400, 400, 200])
  })

  it('a held answer: the call takes effect on arrival, a waiting client gets the answer, one that gave up does not', async () => {
    const groupId = await newGroup()
    await add(groupId, smsBody(1))
    fake.fail({ timeoutMs: 60_000, phase: 'send' }, 1)
    const giveUp = new AbortController()
    const sending = call('POST', `${GROUPS}/${groupId}/send`, undefined, sign(), giveUp.signal)
    await until(() => fake.holding() === 1)
    // The slow provider sent the group on arrival; only its answer is held.
    expect(fake.sentMessages).toHaveLength(1)
    expect(fake.groups.get(groupId)?.status).toBe('SENDING')
    giveUp.abort()
    await expect(sending).rejects.toThrow()
    await until(() => fake.holding() === 0)
    expect(fake.sentMessages).toHaveLength(1)

    const other = await newGroup()
    fake.fail({ timeoutMs: 50, phase: 'create' }, 1)
    expect((await create()).status).toBe(200)
    expect(fake.groups.has(other)).toBe(true)
  })

  it('a hung call takes no effect and is never answered; arrival() sees it come in', async () => {
    const groupId = await newGroup()
    await add(groupId, smsBody(1))
    fake.fail({ hang: true, phase: 'send' }, 1)
    const arrived = fake.arrival('send')
    const hung = call('POST', `${GROUPS}/${groupId}/send`, undefined, sign(), AbortSignal.timeout(300))
    expect(await arrived).toMatchObject({ method: 'POST', phase: 'send' })
    await expect(hung).rejects.toThrow()
    expect(fake.sentMessages).toEqual([])
    expect(fake.groups.get(groupId)?.status).toBe('PENDING')
  })

  it('holds every answer latencyMs once the call took effect', async () => {
    const slow = await startFakeExtSms({ ...credentials, latencyMs: 150 })
    try {
      const answer = fetch(`${slow.url}${GROUPS}`, { method: 'POST', headers: { authorization: sign() }, body: '{}' })
      // The group exists while its answer is still held.
      await until(() => slow.holding() === 1)
      expect(slow.groups.size).toBe(1)
      expect((await answer).status).toBe(200)
      expect(slow.holding()).toBe(0)
    } finally {
      await slow.close()
    }
  })

  it('generates provider-shaped ids', () => {
    expect(providerId('M4V', new Date('2026-08-13T18:54:45Z'))).toMatch(/^M4V20260813185445[0-9A-Z]{15}$/)
    expect(providerId('G4V', new Date())).toHaveLength(32)
  })
})

describe('fake delivery reports', () => {
  const sent = {
    messageId: 'M4V20260302143506CQKNPHTPCX4P5E',
    groupId: 'G4V20260302143025ABCDEFGHIJKLMNO',
    to: '01012345678',
    from: '0212345678',
    type: 'SMS',
    customFields: { svcTenant: 'acme', svcSmsId: '42', svcRecipient: '3' },
  }

  it('builds envelopes and flat reports the parser reads alike', () => {
    const envelope = deliveryReport(sent)
    const flat = deliveryReport(sent, { envelope: false, statusCode: '3043' })

    expect(envelope).toMatchObject({ retryCount: 0, data: { statusCode: '4000', messageId: sent.messageId } })
    expect(flat).toMatchObject({ statusCode: '3043', customFields: sent.customFields })
    expect(parseDeliveryReports([envelope, flat])).toMatchObject([
      { ok: true, report: { tenantSlug: 'acme', smsId: 42, recipientIndex: 3, statusCode: '4000' } },
      { ok: true, report: { statusCode: '3043', groupId: sent.groupId } },
    ])
  })

  it('builds one report per message', () => {
    expect(deliveryReportBody([sent, sent], { statusCode: '3000' })).toHaveLength(2)
  })

  it('computes the X-Provider-Secret of a webhook token', () => {
    expect(providerSecretHeader('test-secret')).toBe('fe1bae27cb7c1fb823f496f286e78f1d2ae87734')
  })
})
