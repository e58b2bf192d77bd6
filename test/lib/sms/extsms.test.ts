import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createExtSmsProvider } from '../../../lib/sms/providers/extsms.js'
import type { OutgoingSms, SendRequest, SmsProvider } from '../../../lib/sms/providers/provider.js'
import { startFakeExtSms, type FakeExtSms } from '../../fakes/extsms-server.js'

const credentials = { apiKey: 'test-key', apiSecret: 'test-secret-value' }

function message(recipientIndex: number, overrides: Partial<OutgoingSms> = {}): OutgoingSms {
  return {
    recipientIndex,
    to: `0101234${String(5000 + recipientIndex).padStart(4, '0')}`,
    from: '0212345678',
    text: 'hello',
    type: 'SMS',
    ...overrides,
  }
}

function request(messages: OutgoingSms[]): SendRequest {
  return { tenantSlug: 'acme', smsId: 42, kind: 'STAFF', messages }
}

describe('extsms provider', () => {
  let fake: FakeExtSms
  let provider: SmsProvider

  beforeEach(async () => {
    fake = await startFakeExtSms(credentials)
    provider = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 2_000 })
  })

  afterEach(async () => {
    await fake.close()
  })

  it('sends every message and returns the provider ids', async () => {
    const result = await provider.send(request([message(0), message(1), message(2)]))

    expect(result.kind).toBe('accepted')
    if (result.kind !== 'accepted') return
    expect(result.groupId).toMatch(/^G4V\d{14}[0-9A-Z]{15}$/)
    expect(result.refused).toEqual([])
    expect(result.accepted.map((entry) => entry.recipientIndex)).toEqual([0, 1, 2])
    for (const entry of result.accepted) {
      expect(entry.messageId).toMatch(/^M4V\d{14}[0-9A-Z]{15}$/)
      expect(entry.statusCode).toBe('2000')
    }
    expect(fake.sentMessages.map((sent) => sent.messageId)).toEqual(result.accepted.map((entry) => entry.messageId))
  })

  it('posts the documented body with custom fields', async () => {
    await provider.send(request([message(0), message(5)]))

    expect(fake.requests).toHaveLength(1)
    expect(fake.requests[0]?.raw).toEqual({
      messages: [
        {
          to: '01012345000',
          from: '0212345678',
          text: 'hello',
          type: 'SMS',
          customFields: { svcTenant: 'acme', svcSmsId: '42', svcRecipient: '0' },
        },
        {
          to: '01012345005',
          from: '0212345678',
          text: 'hello',
          type: 'SMS',
          customFields: { svcTenant: 'acme', svcSmsId: '42', svcRecipient: '5' },
        },
      ],
      allowDuplicates: true,
      showMessageList: true,
    })
    expect(fake.requests[0]?.headers['content-type']).toBe('application/json')
  })

  it('signs every call afresh', async () => {
    await provider.send(request([message(0)]))
    await provider.send(request([message(0)]))

    const headers = fake.requests.map((call) => call.headers.authorization)
    expect(headers).toHaveLength(2)
    expect(headers[0]).toMatch(/^HMAC-SHA256 apiKey=test-key, date=\S+, salt=[0-9A-Za-z]{32}, signature=[0-9a-f]{64}$/)
    expect(headers[0]).not.toBe(headers[1])
  })

  it('sends an LMS with its type and subject', async () => {
    const text = '가'.repeat(100)
    const result = await provider.send(request([message(0, { type: 'LMS', text, subject: 'Notice' })]))

    expect(result.kind).toBe('accepted')
    expect(fake.sentMessages[0]).toMatchObject({ type: 'LMS', subject: 'Notice', text })
  })

  it('cuts an LMS subject to 40 bytes', async () => {
    await provider.send(request([message(0, { type: 'LMS', text: 'long text', subject: '공지'.repeat(15) })]))

    expect(fake.sentMessages[0]?.subject).toBe('공지'.repeat(10))
  })

  it('never sends a subject with an SMS', async () => {
    const result = await provider.send(request([message(0, { subject: 'ignored' })]))

    expect(result.kind).toBe('accepted')
    expect(fake.sentMessages[0]).not.toHaveProperty('subject')
  })

  it('reports per-message refusals next to the accepted messages', async () => {
    fake.fail({ refuse: (sent) => (sent.customFields.svcRecipient === '1' ? '1062' : null) })

    const result = await provider.send(request([message(0), message(1), message(2)]))

    expect(result).toMatchObject({
      kind: 'accepted',
      refused: [{ recipientIndex: 1, statusCode: '1062', statusMessage: 'sender not registered' }],
    })
    if (result.kind !== 'accepted') return
    expect(result.accepted.map((entry) => entry.recipientIndex)).toEqual([0, 2])
    expect(fake.sentMessages).toHaveLength(2)
  })

  it('reports a call where every message is refused as accepted with only refusals', async () => {
    fake.fail({ refuse: () => '1062' })

    const result = await provider.send(request([message(0), message(1)]))

    expect(result).toMatchObject({ kind: 'accepted', accepted: [] })
    if (result.kind === 'accepted') expect(result.refused.map((entry) => entry.recipientIndex)).toEqual([0, 1])
  })

  it.each([503, 500, 502])('treats HTTP %i as retryable', async (status) => {
    fake.fail({ status }, 1)

    const result = await provider.send(request([message(0)]))

    expect(result).toMatchObject({ kind: 'retryable', error: expect.stringContaining(`HTTP ${status}`) })
    expect(fake.sentMessages).toEqual([])
  })

  it('treats HTTP 429 as retryable', async () => {
    fake.fail({ status: 429 }, 1)

    expect(await provider.send(request([message(0)]))).toMatchObject({
      kind: 'retryable',
      error: expect.stringContaining('TooManyRequests'),
    })
  })

  it('succeeds on the next call once a fault is used up', async () => {
    fake.fail({ status: 503 }, 1)

    expect((await provider.send(request([message(0)]))).kind).toBe('retryable')
    expect((await provider.send(request([message(0)]))).kind).toBe('accepted')
  })

  it('treats HTTP 400 as rejected with the provider error code and message', async () => {
    fake.fail({ status: 400, errorCode: 'ValidationError', errorMessage: 'to is invalid' })

    expect(await provider.send(request([message(0)]))).toEqual({
      kind: 'rejected',
      error: 'ValidationError: to is invalid (HTTP 400)',
    })
  })

  it('treats HTTP 402 as rejected', async () => {
    fake.fail({ status: 402 })

    expect(await provider.send(request([message(0)]))).toMatchObject({
      kind: 'rejected',
      error: expect.stringMatching(/^NotEnoughBalance: /),
    })
  })

  it('treats a timeout as retryable', async () => {
    const impatient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 200 })
    fake.fail({ timeoutMs: 2_000 }, 1)

    const result = await impatient.send(request([message(0)]))

    expect(result).toEqual({ kind: 'retryable', error: 'no answer from the provider within 200 ms' })
  })

  it('treats an unreachable provider as retryable', async () => {
    // The replacement starts while the old fake still holds its port, so it cannot be given that port back.
    const closed = fake
    fake = await startFakeExtSms(credentials)
    await closed.close()
    const unreachable = createExtSmsProvider({ ...credentials, baseUrl: closed.url, timeoutMs: 2_000 })

    expect(await unreachable.send(request([message(0)]))).toMatchObject({
      kind: 'retryable',
      error: expect.stringMatching(/^network error: /),
    })
  })

  it('treats bad credentials as rejected', async () => {
    const wrongSecret = createExtSmsProvider({ ...credentials, apiSecret: 'other', baseUrl: fake.url })
    const wrongKey = createExtSmsProvider({ ...credentials, apiKey: 'other', baseUrl: fake.url })

    expect(await wrongSecret.send(request([message(0)]))).toEqual({
      kind: 'rejected',
      error: 'SignatureDoesNotMatch: authentication failed (HTTP 403)',
    })
    expect(await wrongKey.send(request([message(0)]))).toMatchObject({
      kind: 'rejected',
      error: expect.stringMatching(/^InvalidAPIKey: /),
    })
    expect(fake.sentMessages).toEqual([])
  })

  it('does not follow a redirect with the signed request', async () => {
    const redirector = createServer((_request, response) => {
      response.writeHead(307, { location: `${fake.url}/messages/v4/send-many/detail` }).end()
    })
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
    const { port } = redirector.address() as AddressInfo
    try {
      const redirected = createExtSmsProvider({ ...credentials, baseUrl: `http://127.0.0.1:${port}` })

      expect(await redirected.send(request([message(0)]))).toEqual({ kind: 'rejected', error: 'HTTP 307' })
      expect(fake.calls).toEqual([])
    } finally {
      await new Promise((resolve) => redirector.close(resolve))
    }
  })

  it('accepts a base URL with a trailing slash', async () => {
    const slashed = createExtSmsProvider({ ...credentials, baseUrl: `${fake.url}/` })

    expect((await slashed.send(request([message(0)]))).kind).toBe('accepted')
  })

  it('refuses an empty send, an oversized send and duplicate indexes without calling the provider', async () => {
    await expect(provider.send(request([]))).rejects.toThrow(RangeError)
    const tooMany = Array.from({ length: 10_001 }, (_, index) => message(index))
    await expect(provider.send(request(tooMany))).rejects.toThrow(RangeError)
    await expect(provider.send(request([message(1), message(1)]))).rejects.toThrow(RangeError)
    expect(fake.calls).toEqual([])
  })

  it('sends 10,000 messages in one call', async () => {
    const messages = Array.from({ length: 10_000 }, (_, index) => message(index))
    // What is tested is one call carrying them all; on a loaded machine building and parsing it can take over 2 s.
    const patient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 20_000 })

    const result = await patient.send(request(messages))

    expect(result.kind).toBe('accepted')
    if (result.kind === 'accepted') expect(result.accepted).toHaveLength(10_000)
    expect(fake.requests).toHaveLength(1)
  })
})
