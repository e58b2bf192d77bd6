import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { createAuthChecker, type AuthFailure } from './extsms-auth-check.js'

export { deliveryReport, deliveryReportBody, providerSecretHeader } from './extsms-reports.js'
export type { DeliveryReportOptions, ReportableMessage } from './extsms-reports.js'

/**
 * A loopback fake of the live SMS provider (docs/provider.md), speaking its real HTTP protocol so the adapter and
 * the dispatcher are tested over a socket. It checks the signature the way the provider does, validates the
 * body, registers messages with generated ids and supports fault injection.
 */

export interface FakeIncomingMessage {
  to: string
  from: string
  text: string
  type: 'SMS' | 'LMS'
  subject?: string
  customFields: Record<string, string>
}

export interface FakeSentMessage extends FakeIncomingMessage {
  messageId: string
  groupId: string
  statusCode: string
}

export interface FakeRequest {
  body: { messages: FakeIncomingMessage[]; allowDuplicates: unknown; showMessageList: unknown }
  /** The JSON exactly as received. */
  raw: unknown
  headers: IncomingHttpHeaders
}

/** `status` 0: the client gave up before a held (`timeoutMs`) answer was sent. */
export interface FakeCall {
  method: string
  path: string
  status: number
  headers: IncomingHttpHeaders
}

/**
 * `status`: answer every call with that status and the provider's error body. `timeoutMs`: hold the answer that
 * long; a client that gave up by then has sent nothing, one still waiting gets the normal answer. `refuse`:
 * return a status code (e.g. '1062') to put that message in failedMessageList, or null to accept it;
 * `omitCustomFields` then answers as the official SDK declares the answer may be: entries without the optional
 * `customFields` echo, with its other fields (`to`, `from`, `type`, `country`, ...) and the full `groupInfo`.
 */
export type FakeFault =
  | { status: number; errorCode?: string; errorMessage?: string }
  | { timeoutMs: number }
  | { refuse: (message: FakeIncomingMessage) => string | null; omitCustomFields?: boolean }

export interface FakeExtSms {
  url: string
  /** Every call answered 200, in order. */
  requests: FakeRequest[]
  /** Every message the fake accepted (messageList), across calls. */
  sentMessages: FakeSentMessage[]
  /** Every HTTP call received, whatever its answer. */
  calls: FakeCall[]
  /**
   * Every valid send call as it arrived, before any held answer: what the provider was handed, including calls
   * whose client died while the answer was held (a killed instance).
   */
  received: FakeRequest[]
  /** Answers currently held (`timeoutMs`) for a client that is still connected or not yet noticed gone. */
  holding(): number
  /** Applies `fault` to the next `times` send calls (every call until reset() when omitted); replaces any other. */
  fail(fault: FakeFault, times?: number): void
  /** Ends fault injection; the recorded history stays. */
  reset(): void
  close(): Promise<void>
}

export interface FakeExtSmsOptions {
  apiKey: string
  apiSecret: string
  now?: () => Date
}

const SEND_PATH = '/messages/v4/send-many/detail'
const MAX_MESSAGES = 10_000
const MAX_BODY_BYTES = 64 * 1024 * 1024
const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'

const REFUSAL_MESSAGES: Record<string, string> = {
  '1026': 'duplicate message',
  '1029': 'characters not supported in SMS',
  '1030': 'insufficient balance',
  '1031': 'message too long',
  '1062': 'sender not registered',
  '2062': 'sender not registered',
}

const ERROR_CODES: Record<number, string> = {
  400: 'ValidationError',
  402: 'NotEnoughBalance',
  404: 'NotFound',
  409: 'Conflict',
  413: 'RecipientsTooMany',
  429: 'TooManyRequests',
}

class ValidationError extends Error {}

/** `M4V`/`G4V` + yyyyMMddHHmmss + 15 of [0-9A-Z]: 32 characters, like the provider's ids. */
export function providerId(prefix: 'M4V' | 'G4V', at: Date): string {
  const stamp = at.toISOString().replace(/\D/g, '').slice(0, 14)
  // One read of random bytes per id, not one randomInt call per character: the benchmarks' loopback provider names
  // 100 messages per call and shares the machine with what it measures. The modulo's slight skew does not matter
  // for an id that only has to be unique.
  const bytes = randomBytes(15)
  let suffix = ''
  for (const byte of bytes) suffix += ID_ALPHABET[byte % ID_ALPHABET.length]
  return `${prefix}${stamp}${suffix}`
}

function bytesOf(text: string): number {
  let bytes = 0
  for (const char of text) bytes += (char.codePointAt(0) ?? 0) <= 0x7f ? 1 : 2
  return bytes
}

function hasNonEucKr(text: string): boolean {
  for (const char of text) if ((char.codePointAt(0) ?? 0) > 0xffff) return true
  return false
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseMessage(raw: unknown, index: number): FakeIncomingMessage {
  const where = `messages[${index}]`
  if (!isRecord(raw)) throw new ValidationError(`${where} is not an object`)
  const { to, from, text, type, subject, customFields } = raw
  if (typeof to !== 'string' || !/^\d{8,12}$/.test(to)) throw new ValidationError(`${where}.to must be digits`)
  if (typeof from !== 'string' || !/^\d{8,11}$/.test(from)) throw new ValidationError(`${where}.from must be digits`)
  if (typeof text !== 'string' || text === '') throw new ValidationError(`${where}.text is required`)
  if (type !== 'SMS' && type !== 'LMS') throw new ValidationError(`${where}.type must be SMS or LMS`)
  if (subject !== undefined) {
    if (type === 'SMS') throw new ValidationError(`${where}.subject is not allowed for SMS`)
    if (typeof subject !== 'string' || bytesOf(subject) > 40) throw new ValidationError(`${where}.subject too long`)
  }
  const fields: Record<string, string> = {}
  if (customFields !== undefined) {
    if (!isRecord(customFields)) throw new ValidationError(`${where}.customFields is not an object`)
    for (const [key, value] of Object.entries(customFields)) {
      if (key.length > 30 || typeof value !== 'string' || value.length > 100) {
        throw new ValidationError(`${where}.customFields.${key} is invalid`)
      }
      fields[key] = value
    }
  }
  return { to, from, text, type, ...(subject === undefined ? {} : { subject }), customFields: fields }
}

const ACCOUNT_ID = '26081318543200'

/** What an SDK-shaped answer entry says of its message in place of the echo. */
function sdkFields(message: FakeIncomingMessage) {
  return { to: message.to, from: message.from, type: message.type, country: '82' }
}

function sdkGroupInfo(groupId: string, at: Date, registeredSuccess: number, registeredFailed: number) {
  const total = registeredSuccess + registeredFailed
  const cash = { requested: 0, replacement: 0, refund: 0, sum: 0 }
  return {
    groupId,
    status: 'SENDING',
    count: {
      total,
      sentTotal: 0,
      sentFailed: 0,
      sentSuccess: 0,
      sentPending: 0,
      sentReplacement: 0,
      refund: 0,
      registeredFailed,
      registeredSuccess,
    },
    countForCharge: { sms: {}, lms: {}, mms: {}, ata: {}, cta: {}, cti: {}, nsa: {} },
    balance: cash,
    point: cash,
    app: { profit: { sms: 0, lms: 0 }, appId: null, version: null },
    log: [{ createAt: at.toISOString(), message: 'message group created' }],
    accountId: ACCOUNT_ID,
    apiVersion: '4',
    dateCreated: at.toISOString(),
    dateUpdated: at.toISOString(),
  }
}

function builtInRefusal(message: FakeIncomingMessage): string | null {
  if (message.type === 'SMS' && hasNonEucKr(message.text)) return '1029'
  return bytesOf(message.text) > (message.type === 'SMS' ? 90 : 2000) ? '1031' : null
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    request.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) request.destroy(new Error('body too large'))
      else chunks.push(chunk)
    })
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    request.on('error', reject)
  })
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

export async function startFakeExtSms(options: FakeExtSmsOptions): Promise<FakeExtSms> {
  const now = options.now ?? (() => new Date())
  const auth = createAuthChecker(options.apiKey, options.apiSecret, now)
  const requests: FakeRequest[] = []
  const sentMessages: FakeSentMessage[] = []
  const calls: FakeCall[] = []
  const received: FakeRequest[] = []
  // Held answers, woken early by close() so no handler outlives the server.
  const sleepers = new Set<() => void>()
  let fault: FakeFault | null = null
  let faultCallsLeft = 0

  function takeFault(): FakeFault | null {
    if (fault === null) return null
    const current = fault
    faultCallsLeft -= 1
    if (faultCallsLeft <= 0) fault = null
    return current
  }

  function register(body: FakeRequest['body'], raw: unknown, headers: IncomingHttpHeaders, refuse: FakeFault | null) {
    const at = now()
    const groupId = providerId('G4V', at)
    const messageList: Record<string, unknown>[] = []
    const failedMessageList: Record<string, unknown>[] = []
    const sdk = refuse !== null && 'refuse' in refuse && refuse.omitCustomFields === true
    for (const message of body.messages) {
      const refusal = (refuse && 'refuse' in refuse ? refuse.refuse(message) : null) ?? builtInRefusal(message)
      if (refusal !== null) {
        const statusMessage = REFUSAL_MESSAGES[refusal] ?? 'refused'
        const { to, customFields } = message
        const fields = sdk
          ? { ...sdkFields(message), messageId: providerId('M4V', at), accountId: ACCOUNT_ID }
          : { customFields }
        failedMessageList.push({ to, statusCode: refusal, statusMessage, ...fields })
        continue
      }
      const sent: FakeSentMessage = { ...message, messageId: providerId('M4V', at), groupId, statusCode: '2000' }
      sentMessages.push(sent)
      messageList.push({
        messageId: sent.messageId,
        statusCode: '2000',
        statusMessage: 'accepted',
        ...(sdk ? sdkFields(message) : { customFields: message.customFields }),
      })
    }
    requests.push({ body, raw, headers })
    if (sdk) {
      const groupInfo = sdkGroupInfo(groupId, at, messageList.length, failedMessageList.length)
      return { groupInfo, messageList, failedMessageList }
    }
    return {
      groupInfo: {
        groupId,
        status: 'SENDING',
        count: {
          total: body.messages.length,
          registeredSuccess: messageList.length,
          registeredFailed: failedMessageList.length,
        },
      },
      messageList,
      failedMessageList,
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<number> {
    const text = await readBody(request)
    if (request.method !== 'POST' || request.url !== SEND_PATH) {
      send(response, 404, { errorCode: 'NotFound', errorMessage: `no route ${request.method} ${request.url}` })
      return 404
    }
    const authFailure: AuthFailure | null = auth.check(request.headers.authorization)
    if (authFailure !== null) {
      send(response, 403, { errorCode: authFailure, errorMessage: 'authentication failed' })
      return 403
    }
    const current = takeFault()
    if (current && 'status' in current) {
      const errorCode = current.errorCode ?? ERROR_CODES[current.status] ?? 'ServerError'
      send(response, current.status, { errorCode, errorMessage: current.errorMessage ?? 'injected failure' })
      return current.status
    }

    let body: FakeRequest['body']
    let raw: unknown
    try {
      raw = JSON.parse(text) as unknown
      const parsed = raw
      if (!isRecord(parsed) || !Array.isArray(parsed.messages)) throw new ValidationError('messages must be an array')
      if (parsed.messages.length === 0) throw new ValidationError('messages must not be empty')
      if (parsed.messages.length > MAX_MESSAGES) {
        send(response, 413, { errorCode: 'RecipientsTooMany', errorMessage: `at most ${MAX_MESSAGES} messages` })
        return 413
      }
      body = {
        messages: parsed.messages.map(parseMessage),
        allowDuplicates: parsed.allowDuplicates,
        showMessageList: parsed.showMessageList,
      }
    } catch (error) {
      const errorMessage = error instanceof ValidationError ? error.message : 'body is not valid JSON'
      send(response, 400, { errorCode: 'ValidationError', errorMessage })
      return 400
    }

    received.push({ body, raw, headers: request.headers })
    if (current && 'timeoutMs' in current) {
      let clientGone = false
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          sleepers.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, current.timeoutMs)
        sleepers.add(wake)
        // A client that goes away (gave up, or its process was killed) ends the hold at once.
        response.on('close', () => {
          clientGone = !response.writableEnded
          if (clientGone) wake()
        })
      })
      if (clientGone || response.destroyed) return 0
    }
    send(response, 200, register(body, raw, request.headers, current))
    return 200
  }

  const server = createServer((request, response) => {
    handle(request, response)
      .then((status) => {
        calls.push({ method: request.method ?? '', path: request.url ?? '', status, headers: request.headers })
      })
      .catch(() => {
        if (!response.headersSent) send(response, 500, { errorCode: 'InternalError', errorMessage: 'fake failed' })
      })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sentMessages,
    calls,
    received,
    holding: () => sleepers.size,
    fail(next, times) {
      fault = next
      faultCallsLeft = times ?? Number.POSITIVE_INFINITY
    },
    reset() {
      fault = null
      faultCallsLeft = 0
    },
    async close() {
      server.closeAllConnections()
      for (const wake of [...sleepers]) wake()
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    },
  }
}
