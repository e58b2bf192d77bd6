import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadEnv } from '../../../lib/env.js'
import { createExtSmsProvider } from '../../../lib/dispatch/providers/extsms.js'
import { createProvider } from '../../../lib/dispatch/providers/index.js'
import type { CallFailure, GroupEntry, OutgoingSms, SendRequest, SmsProvider } from '../../../lib/dispatch/providers/provider.js'
import { startFakeExtSms, type FakeExtSms } from '../../support/fakes/extsms-server.js'

const credentials = { apiKey: 'test-key', apiSecret: 'test-secret-value' }

function message(recipientIndex: number, overrides: Partial<Extract<OutgoingSms, { type: 'SMS' | 'LMS' }>> = {}): OutgoingSms {
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

type Sent =
  | { kind: 'accepted'; groupId: string; accepted: GroupEntry[]; refused: GroupEntry[] }
  | CallFailure

/**
 * The adapter's phases in a row, as one attempt uses them: create, add, send. Most rules of the adapter (the body,
 * the signature, how answers are read) are the same in each phase, so they are checked through this.
 */
async function sendInGroup(provider: SmsProvider, sending: SendRequest): Promise<Sent> {
  const created = await provider.createGroup(sending)
  if (created.kind !== 'ok') return created
  const added = await provider.addMessages(created.groupId, sending)
  if (added.kind !== 'ok') return added
  const sent = await provider.sendGroup(created.groupId)
  if (sent.kind !== 'ok') return sent
  const taken = (entry: GroupEntry) => entry.statusCode === '2000'
  return {
    kind: 'accepted',
    groupId: created.groupId,
    accepted: added.entries.filter(taken),
    refused: added.entries.filter((entry) => !taken(entry)),
  }
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
    const result = await sendInGroup(provider, request([message(0), message(1), message(2)]))

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
    await sendInGroup(provider, request([message(0), message(5)]))

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
    })
    expect(fake.requests[0]?.headers['content-type']).toBe('application/json')
  })

  it('signs every call afresh', async () => {
    await sendInGroup(provider, request([message(0)]))
    await sendInGroup(provider, request([message(0)]))

    const headers = fake.calls.map((call) => call.headers.authorization)
    expect(headers).toHaveLength(6)
    expect(new Set(headers).size).toBe(6)
    expect(headers[0]).toMatch(/^HMAC-SHA256 apiKey=test-key, date=\S+, salt=[0-9A-Za-z]{32}, signature=[0-9a-f]{64}$/)
    expect(headers[0]).not.toBe(headers[1])
  })

  it('sends an LMS with its type and subject', async () => {
    const text = '가'.repeat(100)
    const result = await sendInGroup(provider, request([message(0, { type: 'LMS', text, subject: 'Notice' })]))

    expect(result.kind).toBe('accepted')
    expect(fake.sentMessages[0]).toMatchObject({ type: 'LMS', subject: 'Notice', text })
  })

  it('cuts an LMS subject to 40 bytes', async () => {
    await sendInGroup(provider, request([message(0, { type: 'LMS', text: 'long text', subject: '공지'.repeat(15) })]))

    expect(fake.sentMessages[0]?.subject).toBe('공지'.repeat(10))
  })

  it('never sends a subject with an SMS', async () => {
    const result = await sendInGroup(provider, request([message(0, { subject: 'ignored' })]))

    expect(result.kind).toBe('accepted')
    expect(fake.sentMessages[0]).not.toHaveProperty('subject')
  })

  it('reports per-message refusals next to the accepted messages', async () => {
    fake.fail({ refuse: (sent) => (sent.customFields.svcRecipient === '1' ? '1062' : null) })

    const result = await sendInGroup(provider, request([message(0), message(1), message(2)]))

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

    const result = await sendInGroup(provider, request([message(0), message(1)]))

    expect(result).toMatchObject({ kind: 'accepted', accepted: [] })
    if (result.kind === 'accepted') expect(result.refused.map((entry) => entry.recipientIndex)).toEqual([0, 1])
  })

  it.each([503, 500, 502])('treats HTTP %i as retryable', async (status) => {
    fake.fail({ status }, 1)

    const result = await sendInGroup(provider, request([message(0)]))

    expect(result).toMatchObject({ kind: 'retryable', error: expect.stringContaining(`HTTP ${status}`) })
    expect(fake.sentMessages).toEqual([])
  })

  it('treats HTTP 429 as retryable', async () => {
    fake.fail({ status: 429 }, 1)

    expect(await sendInGroup(provider, request([message(0)]))).toMatchObject({
      kind: 'retryable',
      error: expect.stringContaining('TooManyRequests'),
    })
  })

  it('succeeds on the next call once a fault is used up', async () => {
    fake.fail({ status: 503 }, 1)

    expect((await sendInGroup(provider, request([message(0)]))).kind).toBe('retryable')
    expect((await sendInGroup(provider, request([message(0)]))).kind).toBe('accepted')
  })

  it('treats HTTP 400 as rejected with the provider error code and message', async () => {
    fake.fail({ status: 400, errorCode: 'ValidationError', errorMessage: 'to is invalid' })

    expect(await sendInGroup(provider, request([message(0)]))).toEqual({
      kind: 'rejected',
      error: 'ValidationError: to is invalid (HTTP 400)',
    })
  })

  it('treats HTTP 402 as rejected', async () => {
    fake.fail({ status: 402 })

    expect(await sendInGroup(provider, request([message(0)]))).toMatchObject({
      kind: 'rejected',
      error: expect.stringMatching(/^NotEnoughBalance: /),
    })
  })

  it('treats a timeout as retryable', async () => {
    const impatient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 200 })
    fake.fail({ timeoutMs: 2_000 }, 1)

    const result = await sendInGroup(impatient, request([message(0)]))

    expect(result).toEqual({ kind: 'retryable', error: 'no answer from the provider within 200 ms' })
  })

  it('treats an unreachable provider as retryable', async () => {
    // The replacement starts while the old fake still holds its port, so it cannot be given that port back.
    const closed = fake
    fake = await startFakeExtSms(credentials)
    await closed.close()
    const unreachable = createExtSmsProvider({ ...credentials, baseUrl: closed.url, timeoutMs: 2_000 })

    expect(await sendInGroup(unreachable, request([message(0)]))).toMatchObject({
      kind: 'retryable',
      error: expect.stringMatching(/^network error: /),
    })
  })

  it('treats bad credentials as rejected', async () => {
    const wrongSecret = createExtSmsProvider({ ...credentials, apiSecret: 'other', baseUrl: fake.url })
    const wrongKey = createExtSmsProvider({ ...credentials, apiKey: 'other', baseUrl: fake.url })

    expect(await sendInGroup(wrongSecret, request([message(0)]))).toEqual({
      kind: 'rejected',
      error: 'SignatureDoesNotMatch: authentication failed (HTTP 403)',
    })
    expect(await sendInGroup(wrongKey, request([message(0)]))).toMatchObject({
      kind: 'rejected',
      error: expect.stringMatching(/^InvalidAPIKey: /),
    })
    expect(fake.sentMessages).toEqual([])
  })

  it('does not follow a redirect with the signed request', async () => {
    const redirector = createServer((_request, response) => {
      response.writeHead(307, { location: `${fake.url}/messages/v4/groups` }).end()
    })
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve))
    const { port } = redirector.address() as AddressInfo
    try {
      const redirected = createExtSmsProvider({ ...credentials, baseUrl: `http://127.0.0.1:${port}` })

      expect(await sendInGroup(redirected, request([message(0)]))).toEqual({ kind: 'rejected', error: 'HTTP 307' })
      expect(fake.calls).toEqual([])
    } finally {
      await new Promise((resolve) => redirector.close(resolve))
    }
  })

  it('accepts a base URL with a trailing slash', async () => {
    const slashed = createExtSmsProvider({ ...credentials, baseUrl: `${fake.url}/` })

    expect((await sendInGroup(slashed, request([message(0)]))).kind).toBe('accepted')
  })

  it('refuses an empty add, an oversized add and duplicate indexes without calling the provider', async () => {
    const group = 'G4V20260101000000AAAAAAAAAAAAAAA'
    await expect(provider.addMessages(group, request([]))).rejects.toThrow(RangeError)
    const tooMany = Array.from({ length: 10_001 }, (_, index) => message(index))
    await expect(provider.addMessages(group, request(tooMany))).rejects.toThrow(RangeError)
    await expect(provider.addMessages(group, request([message(1), message(1)]))).rejects.toThrow(RangeError)
    expect(fake.calls).toEqual([])
  })

  it('calls each phase on its documented path: create, add, send', async () => {
    await sendInGroup(provider, request([message(0)]))

    const [create, add, send] = fake.calls
    const groupId = [...fake.groups.keys()][0]!
    expect([create?.method, create?.path]).toEqual(['POST', '/messages/v4/groups'])
    expect([add?.method, add?.path]).toEqual(['PUT', `/messages/v4/groups/${groupId}/messages`])
    expect([send?.method, send?.path]).toEqual(['POST', `/messages/v4/groups/${groupId}/send`])
    expect(fake.groups.get(groupId)?.status).toBe('SENDING')
  })

  it('creates a group that sends nothing until it is filled and sent', async () => {
    const created = await provider.createGroup(request([]))
    expect(created).toMatchObject({ kind: 'ok', groupId: expect.stringMatching(/^G4V/) })
    if (created.kind !== 'ok') return
    expect(await provider.addMessages(created.groupId, request([message(0), message(1)]))).toMatchObject({ kind: 'ok' })
    expect(fake.sentMessages).toEqual([])
    expect(await provider.readGroup(created.groupId, [message(0), message(1)])).toMatchObject({ kind: 'ok', sent: false })
  })

  it('is refused a second send of one group, and never delivers it twice', async () => {
    const first = await sendInGroup(provider, request([message(0)]))
    if (first.kind !== 'accepted') throw new Error('not sent')

    expect(await provider.sendGroup(first.groupId)).toMatchObject({ kind: 'rejected', error: expect.stringContaining('HTTP 400') })
    expect(fake.sentMessages).toHaveLength(1)
  })

  it('reads a sent group back across pages, taken and refused entries matched to their recipients', async () => {
    fake.fail({ refuse: (sent) => (sent.customFields.svcRecipient === '700' ? '1062' : null) })
    const messages = Array.from({ length: 1_200 }, (_, index) => message(index))
    const sent = await sendInGroup(provider, request(messages))
    if (sent.kind !== 'accepted') throw new Error('not sent')
    fake.reset()
    const callsBefore = fake.calls.length

    const read = await provider.readGroup(sent.groupId, messages)

    expect(read).toMatchObject({ kind: 'ok', sent: true })
    if (read.kind !== 'ok') return
    expect(read.entries).toHaveLength(1_200)
    expect(read.entries.find((entry) => entry.recipientIndex === 700)).toMatchObject({ statusCode: '1062' })
    expect(new Set(read.entries.map((entry) => entry.recipientIndex)).size).toBe(1_200)
    // The group itself, then three pages of 500 (the fake's default page is 20), each from where the last one ended.
    const reads = fake.calls.slice(callsBefore).map((call) => new URL(call.path, fake.url))
    expect(reads.map((url) => url.pathname.split('/').pop())).toEqual([sent.groupId, 'messages', 'messages', 'messages'])
    expect(reads.slice(1).map((url) => url.searchParams.get('limit'))).toEqual(['500', '500', '500'])
    const group = fake.groups.get(sent.groupId)!
    expect(reads.slice(1).map((url) => url.searchParams.get('startKey'))).toEqual([
      null,
      group.messages[500]!.messageId,
      group.messages[1_000]!.messageId,
    ])
  })

  it('reads a group back as retryable when a later page fails, never as the part it read', async () => {
    const messages = Array.from({ length: 1_200 }, (_, index) => message(index))
    const sent = await sendInGroup(provider, request(messages))
    if (sent.kind !== 'accepted') throw new Error('not sent')
    const groupRead = fake.arrival('read')

    const read = provider.readGroup(sent.groupId, messages)
    await groupRead
    await fake.arrival('read')
    // The first page is being answered; the next read, the second page, fails.
    fake.fail({ status: 503, phase: 'read' }, 1)

    // A partial list would leave the recipients of the unread pages without an entry: they would be sent again.
    expect(await read).toMatchObject({ kind: 'retryable', error: expect.stringContaining('HTTP 503') })
  })

  it('reads siblings sharing a phone back one entry each when the echo is missing, a refusal with its code', async () => {
    fake.fail({ refuse: (sent) => (sent.customFields.svcRecipient === '2' ? '1062' : null), omitCustomFields: true })
    const guardian = { to: '01055550000' }
    const messages = [message(0, guardian), message(1, guardian), message(2, guardian), message(3)]
    const sent = await sendInGroup(provider, request(messages))
    if (sent.kind !== 'accepted') throw new Error('not sent')
    const group = fake.groups.get(sent.groupId)!

    const read = await provider.readGroup(sent.groupId, messages)

    expect(read).toMatchObject({ kind: 'ok', sent: true })
    if (read.kind !== 'ok') return
    const byRecipient = [...read.entries].sort((a, b) => a.recipientIndex - b.recipientIndex)
    expect(byRecipient.map((entry) => [entry.recipientIndex, entry.messageId, entry.statusCode])).toEqual(
      group.messages.map((stored, index) => [index, stored.messageId, stored.statusCode]),
    )
    expect(byRecipient[2]).toMatchObject({ statusCode: '1062', statusMessage: 'sender not registered' })
  })

  it('reads a group that was filled but not sent as not sent, with its entries', async () => {
    const created = await provider.createGroup(request([]))
    if (created.kind !== 'ok') throw new Error('not created')
    await provider.addMessages(created.groupId, request([message(0), message(1)]))

    const read = await provider.readGroup(created.groupId, [message(0), message(1)])

    expect(read).toMatchObject({ kind: 'ok', sent: false })
    if (read.kind === 'ok') expect(read.entries.map((entry) => [entry.recipientIndex, entry.statusCode])).toEqual([[0, '2000'], [1, '2000']])
  })

  it('reads only the recipients asked about, matched by number when the echo is missing', async () => {
    fake.fail({ refuse: () => null, omitCustomFields: true })
    const sent = await sendInGroup(provider, request([message(0), message(1), message(2)]))
    if (sent.kind !== 'accepted') throw new Error('not sent')

    const read = await provider.readGroup(sent.groupId, [message(2)])

    expect(read).toMatchObject({ kind: 'ok', sent: true, entries: [{ recipientIndex: 2, statusCode: '2000' }] })
  })

  it('reads a group the provider does not know as missing, and a failing read as retryable', async () => {
    expect(await provider.readGroup('G4V20260101000000AAAAAAAAAAAAAAA', [message(0)])).toEqual({ kind: 'missing' })
    fake.fail({ status: 503, phase: 'read' }, 1)
    expect(await provider.readGroup('G4V20260101000000AAAAAAAAAAAAAAA', [message(0)])).toMatchObject({ kind: 'retryable' })
  })

  it('answers retryable when the send is answered after its time limit, though the group went out', async () => {
    const impatient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 200 })
    fake.fail({ timeoutMs: 1_000, phase: 'send' }, 1)

    expect(await sendInGroup(impatient, request([message(0)]))).toEqual({
      kind: 'retryable',
      error: 'no answer from the provider within 200 ms',
    })
    // Which is why the dispatcher reads the group back rather than sending again.
    expect(fake.sentMessages).toHaveLength(1)
    expect(impatient.callTimeoutMs).toBe(200)
  })

  it('is refused an add to a group already sent', async () => {
    const first = await sendInGroup(provider, request([message(0)]))
    if (first.kind !== 'accepted') throw new Error('not sent')

    expect(await provider.addMessages(first.groupId, request([message(1)]))).toEqual({
      kind: 'rejected',
      error: 'GroupAlreadySent: messages cannot be added to a sent group (HTTP 400)',
    })
    expect(fake.sentMessages).toHaveLength(1)
  })

  it.each(['create', 'add', 'send', 'read'] as const)(
    'gives up the %s call that is not answered within its time limit, as retryable',
    async (phase) => {
      const impatient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 200 })
      const created = await provider.createGroup(request([]))
      if (created.kind !== 'ok') throw new Error('not created')
      const groupId = created.groupId
      await provider.addMessages(groupId, request([message(0)]))
      // Held longer than the limit and far shorter than the default 10 s: an adapter that ignored its limit gets it.
      fake.fail({ timeoutMs: 5_000, phase }, 1)

      const calls = {
        create: () => impatient.createGroup(request([])),
        add: () => impatient.addMessages(groupId, request([message(1)])),
        send: () => impatient.sendGroup(groupId),
        read: () => impatient.readGroup(groupId, [message(0)]),
      }

      expect(await calls[phase]()).toEqual({ kind: 'retryable', error: 'no answer from the provider within 200 ms' })
    },
  )

  it('gives up an answer that stalls after its headers, as retryable', async () => {
    const stalling = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"groupId":')
    })
    await new Promise<void>((resolve) => stalling.listen(0, '127.0.0.1', resolve))
    const { port } = stalling.address() as AddressInfo
    try {
      const impatient = createExtSmsProvider({ ...credentials, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 })

      expect(await impatient.createGroup(request([]))).toEqual({ kind: 'retryable', error: 'no answer from the provider within 200 ms' })
    } finally {
      stalling.closeAllConnections()
      await new Promise((resolve) => stalling.close(resolve))
    }
  })

  it.each(['<html>gateway</html>', '{}', ''])('treats a 2xx answer it cannot read (%j) as retryable in every phase', async (body) => {
    const garbled = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(body)
    })
    await new Promise<void>((resolve) => garbled.listen(0, '127.0.0.1', resolve))
    const { port } = garbled.address() as AddressInfo
    try {
      const confused = createExtSmsProvider({ ...credentials, baseUrl: `http://127.0.0.1:${port}` })
      const groupId = 'G4V20260101000000AAAAAAAAAAAAAAA'

      // The call may have taken effect: an add or a send that cannot be read must be read back, never taken as refused.
      expect(await confused.createGroup(request([]))).toEqual({ kind: 'retryable', error: 'unreadable 200 answer to creating a group from the provider' })
      expect(await confused.addMessages(groupId, request([message(0)]))).toEqual({ kind: 'retryable', error: 'unreadable 200 answer to adding messages from the provider' })
      expect(await confused.sendGroup(groupId)).toEqual({ kind: 'retryable', error: 'unreadable 200 answer to sending the group from the provider' })
      expect(await confused.readGroup(groupId, [message(0)])).toEqual({ kind: 'retryable', error: 'unreadable 200 answer to reading the group from the provider' })
    } finally {
      await new Promise((resolve) => garbled.close(resolve))
    }
  })

  it('adds 10,000 messages in one call', async () => {
    const messages = Array.from({ length: 10_000 }, (_, index) => message(index))
    // What is tested is one call carrying them all; on a loaded machine building and parsing it can take over 2 s.
    const patient = createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 20_000 })

    const result = await sendInGroup(patient, request(messages))

    expect(result.kind).toBe('accepted')
    if (result.kind === 'accepted') expect(result.accepted).toHaveLength(10_000)
    expect(fake.requests).toHaveLength(1)
  })
})

describe('the configured provider', () => {
  it('takes its time limit for one call from SVC_SMS_PROVIDER_TIMEOUT_MS', () => {
    const env = loadEnv({
      NODE_ENV: 'test',
      SVC_JWT_SECRET: 'a-secret-of-at-least-thirty-two-bytes!!',
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: 'key',
      SVC_SMS_EXTSMS_API_SECRET: 'secret',
      SVC_SMS_EXTSMS_BASE_URL: 'http://127.0.0.1:9',
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'token',
      SVC_SMS_PROVIDER_TIMEOUT_MS: '2500',
    })
    expect(createProvider(env, pino({ level: 'silent' })).callTimeoutMs).toBe(2500)
    expect(createProvider({ ...env, SVC_SMS_PROVIDER_TIMEOUT_MS: 10_000 }, pino({ level: 'silent' })).callTimeoutMs).toBe(10_000)
  })
})
