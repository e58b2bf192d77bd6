import { createHmac } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseDeliveryReports } from '../../lib/sms/delivery-report.js'
import { authorizationHeader } from '../../lib/sms/providers/extsms-auth.js'
import {
  deliveryReport,
  deliveryReportBody,
  providerSecretHeader,
  providerId,
  startFakeExtSms,
  type FakeExtSms,
} from './extsms-server.js'

const credentials = { apiKey: 'fake-key', apiSecret: 'fake-secret' }
const PATH = '/messages/v4/send-many/detail'

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
    allowDuplicates: true,
    showMessageList: true,
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

  async function post(body: unknown, authorization = authorizationHeader(credentials.apiKey, credentials.apiSecret)) {
    const response = await fetch(`${fake.url}${PATH}`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  it('answers a signed send with the documented 200 body', async () => {
    const { status, body } = await post(smsBody(2))

    expect(status).toBe(200)
    expect(body).toMatchObject({
      groupInfo: { status: 'SENDING', count: { total: 2, registeredSuccess: 2, registeredFailed: 0 } },
      failedMessageList: [],
    })
    expect(body.messageList).toHaveLength(2)
    expect(fake.sentMessages.map((sent) => sent.customFields.svcRecipient)).toEqual(['0', '1'])
  })

  it('rejects a missing, malformed or wrongly signed header with 403', async () => {
    const date = new Date().toISOString()
    const salt = 'abcdefghijklmnop'
    const wrong = createHmac('sha256', 'nope').update(date + salt).digest('hex')

    expect((await post(smsBody(), '')).body.errorCode).toBe('InvalidAPIKey')
    expect((await post(smsBody(), 'Bearer x')).status).toBe(403)
    const forged = `HMAC-SHA256 apiKey=fake-key, date=${date}, salt=${salt}, signature=${wrong}`
    expect(await post(smsBody(), forged)).toMatchObject({ status: 403, body: { errorCode: 'SignatureDoesNotMatch' } })
    expect(fake.sentMessages).toEqual([])
  })

  it('rejects a reused signature', async () => {
    const header = authorizationHeader(credentials.apiKey, credentials.apiSecret)

    expect((await post(smsBody(), header)).status).toBe(200)
    expect(await post(smsBody(), header)).toMatchObject({ status: 403, body: { errorCode: 'DuplicatedSignature' } })
  })

  it('allows 15 minutes of clock skew and no more', async () => {
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000)
    const sign = (date: Date) => authorizationHeader(credentials.apiKey, credentials.apiSecret, date)

    expect((await post(smsBody(), sign(at(-14)))).status).toBe(200)
    expect((await post(smsBody(), sign(at(14)))).status).toBe(200)
    expect((await post(smsBody(), sign(at(-16)))).body.errorCode).toBe('RequestTimeTooSkewed')
    expect((await post(smsBody(), sign(at(16)))).body.errorCode).toBe('RequestTimeTooSkewed')
  })

  it('validates the body', async () => {
    expect(await post('{not json')).toMatchObject({ status: 400, body: { errorCode: 'ValidationError' } })
    expect((await post({ messages: [] })).status).toBe(400)
    expect((await post(smsBody(1, { to: '010-1234-5678' }))).status).toBe(400)
    expect((await post(smsBody(1, { subject: 'no subject on SMS' }))).status).toBe(400)
    expect(await post(smsBody(10_001))).toMatchObject({ status: 413, body: { errorCode: 'RecipientsTooMany' } })
  })

  it('refuses an SMS that is too long or carries an emoji, as the provider does', async () => {
    const { body } = await post({
      messages: [smsBody(1, { text: 'a'.repeat(91) }).messages[0], smsBody(1, { text: 'hi 😀' }).messages[0]],
    })

    expect(body.failedMessageList).toMatchObject([{ statusCode: '1031' }, { statusCode: '1029' }])
  })

  it('answers 404 for another path', async () => {
    const response = await fetch(`${fake.url}/messages/v4/list`)
    expect(response.status).toBe(404)
  })

  it('applies a fault for the given number of calls, then recovers', async () => {
    fake.fail({ status: 503 }, 2)

    expect((await post(smsBody())).status).toBe(503)
    expect((await post(smsBody())).status).toBe(503)
    expect((await post(smsBody())).status).toBe(200)
  })

  it('applies a fault without a count until reset', async () => {
    fake.fail({ status: 400, errorCode: 'ValidationError' })

    expect((await post(smsBody())).status).toBe(400)
    expect((await post(smsBody())).status).toBe(400)
    fake.reset()
    expect((await post(smsBody())).status).toBe(200)
    expect(fake.calls.map((call) => call.status)).toEqual([400, 400, 200])
  })

  it('answers a held call normally when the client waits for it', async () => {
    fake.fail({ timeoutMs: 50 }, 1)

    expect((await post(smsBody())).status).toBe(200)
    expect(fake.sentMessages).toHaveLength(1)
  })

  it('records nothing for a held call the client abandoned', async () => {
    fake.fail({ timeoutMs: 300 }, 1)

    await expect(
      fetch(`${fake.url}${PATH}`, {
        method: 'POST',
        headers: { authorization: authorizationHeader(credentials.apiKey, credentials.apiSecret) },
        body: JSON.stringify(smsBody()),
        signal: AbortSignal.timeout(50),
      }),
    ).rejects.toThrow()
    const deadline = Date.now() + 5_000
    while (fake.calls.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fake.calls).toMatchObject([{ status: 0 }])
    expect(fake.sentMessages).toEqual([])
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
