import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { createAuthChecker, type AuthFailure } from './extsms-auth-check.js'
import { deliveryReport } from './extsms-reports.js'

export { deliveryReport, deliveryReportBody, providerSecretHeader } from './extsms-reports.js'
export type { DeliveryReportOptions, ReportableMessage } from './extsms-reports.js'

/**
 * A loopback fake of the live SMS provider (docs/provider.md), speaking its group API over HTTP so the adapter and
 * the dispatcher are tested over a socket: groups are created, filled, sent once and read back. It checks the
 * signature the way the provider does, validates bodies, registers messages with generated ids, and injects faults
 * per phase, including the ones exactly-once is about: an answer that comes after the client gave up (the call took
 * effect), and a call that never takes effect (the caller died before it was processed).
 */

/** An AlimTalk notice's options as sent (docs/provider.md#alimtalk-notices). */
export interface FakeKakaoOptions {
  pfId: string
  templateId: string
  variables: Record<string, string>
  disableSms?: boolean
}

export interface FakeIncomingMessage {
  to: string
  from: string
  text: string
  type: 'SMS' | 'LMS' | 'ATA'
  subject?: string
  /** An `ATA` message's options; absent on SMS and LMS. */
  kakaoOptions?: FakeKakaoOptions
  customFields: Record<string, string>
}

export interface FakeSentMessage extends FakeIncomingMessage {
  messageId: string
  groupId: string
  statusCode: string
}

export interface FakeRequest {
  /** An add call's messages. */
  body: { messages: FakeIncomingMessage[] }
  /** The JSON exactly as received. */
  raw: unknown
  headers: IncomingHttpHeaders
}

/** `kakao`: the Kakao reads (a channel, a template); `refusals`: pages of the 080 refusal list. */
export type FakePhase = 'create' | 'add' | 'send' | 'read' | 'kakao' | 'refusals'

/** `status` 0: the client gave up (or died) before a held answer was sent. */
export interface FakeCall {
  method: string
  path: string
  phase: FakePhase | null
  status: number
  headers: IncomingHttpHeaders
}

/**
 * Faults apply to calls of `phase` (default `create`, the first call of an attempt; `refuse` applies to adds).
 * `status`: answer with that status and the provider's error body; the call takes no effect. `timeoutMs`: the call
 * takes effect on arrival and its answer is held that long (a slow provider: a client that gave up never learns
 * what happened). `hang`: the call takes no effect and is never answered (the caller dies, or gives up, first).
 * `refuse`: a status code (e.g. '1062') refuses that message at the add, null takes it; `omitCustomFields` then
 * answers as the official SDK declares the answer may be: entries without the optional `customFields` echo.
 */
export type FakeFault =
  | { status: number; errorCode?: string; errorMessage?: string; phase?: FakePhase }
  | { timeoutMs: number; phase?: FakePhase }
  | { hang: true; phase?: FakePhase }
  | { refuse: (message: FakeIncomingMessage) => string | null; omitCustomFields?: boolean }

export interface FakeGroup {
  groupId: string
  status: 'PENDING' | 'SENDING'
  /** Every message added, taken (statusCode 2000) or refused. */
  messages: FakeSentMessage[]
}

/** A template as the provider keeps it (docs/provider.md#kakao-reads); `buttons` absent: none. */
export interface FakeKakaoTemplate {
  templateId: string
  channelId: string
  name: string
  content: string
  status: 'PENDING' | 'INSPECTING' | 'APPROVED' | 'REJECTED'
  buttons?: unknown[]
}

/** The account's Kakao channels and templates, which a test registers; anything else answers 404. */
export interface FakeKakao {
  addChannel(pfId: string, searchId?: string): void
  /** Adds the template, or replaces the one of the same templateId (a status that changed at inspection). */
  putTemplate(template: FakeKakaoTemplate): void
  /**
   * Kakao cannot deliver to these numbers (no KakaoTalk, channel blocked): their AlimTalk notices fall back to SMS
   * or LMS, or fail for good when `disableSms` (`reportOf`). Replaces the previous list; `[]` ends it.
   */
  failFor(numbers: readonly string[]): void
}

/** A refusal made at the account's 080 number (docs/provider.md#the-080-refusal-list). */
export interface FakeRefusal {
  senderNumber: string
  recipientNumber: string
  /** Default: the fake's now. Entries are kept oldest first whatever the order they are added in. */
  dateCreated?: Date
}

/** The account's 080 refusal list, which a test fills; the provider answers it in pages, oldest first. */
export interface FakeRefusals {
  add(...refusals: FakeRefusal[]): void
  /**
   * The next read of page `page` (1: the first page of a walk, 2: the page its nextKey names, ...) answers `status`
   * with the provider's error body instead, once; the page after it is read as usual.
   */
  failPage(page: number, status?: number): void
  /** Every page read answered (status 200), with its query. */
  reads: { senderNumber: string | null; startKey: string | null; since: string | null; limit: number; page: number }[]
}

/** How the provider delivered a sent message, as its delivery report says (docs/provider.md#alimtalk-notices). */
export interface FakeOutcome {
  type: 'SMS' | 'LMS' | 'ATA'
  statusCode: string
}

export interface FakeExtSms {
  url: string
  kakao: FakeKakao
  refusals: FakeRefusals
  /** Every add call answered 200, in order. */
  requests: FakeRequest[]
  /** Every taken message of every group that was sent, in order: what went out to the guardians. */
  sentMessages: FakeSentMessage[]
  /** Every HTTP call received, whatever its answer. */
  calls: FakeCall[]
  /** Every valid add call as it arrived, before any held answer, including calls whose client died. */
  received: FakeRequest[]
  groups: Map<string, FakeGroup>
  /**
   * How a sent message ends: an SMS or LMS, or an AlimTalk notice Kakao delivers, is delivered (`4000`) as its
   * type; a notice to a number of `kakao.failFor` goes out as SMS (text of at most 90 bytes) or LMS, delivered, or
   * with `disableSms` fails (type `ATA`, `3104`).
   */
  outcomeOf(message: FakeSentMessage): FakeOutcome
  /** The webhook element the provider posts for a sent message: its outcome, in the report's format. */
  reportOf(message: FakeSentMessage): Record<string, unknown>
  /** Answers currently held (`timeoutMs`, `hang`) for a client that is still connected or not yet noticed gone. */
  holding(): number
  /** Resolves when the next call of `phase` arrives (before it takes effect); for killing a caller mid-attempt. */
  arrival(phase: FakePhase): Promise<FakeCall>
  /** Applies `fault` to the next `times` calls of its phase (every one until reset() when omitted); replaces any other. */
  fail(fault: FakeFault, times?: number): void
  /** Ends fault injection; the recorded history stays. */
  reset(): void
  close(): Promise<void>
}

export interface FakeExtSmsOptions {
  apiKey: string
  apiSecret: string
  now?: () => Date
  /** Every answer is held this long after its call took effect, as a provider across the internet would take. */
  latencyMs?: number
}

const GROUPS_PATH = '/messages/v4/groups'
const KAKAO_PATH = /^\/kakao\/v2\/(channels|templates)\/([^/]+)$/
const REFUSALS_PATH = '/iam/v1/black'
const MAX_MESSAGES = 10_000
const MAX_BODY_BYTES = 64 * 1024 * 1024
const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const DEFAULT_PAGE = 20
const MAX_PAGE = 500

const REFUSAL_MESSAGES: Record<string, string> = {
  '1026': 'duplicate message',
  '1029': 'characters not supported in SMS',
  '1030': 'insufficient balance',
  '1031': 'message too long',
  '1062': 'sender not registered',
  '2062': 'sender not registered',
  '3016': 'kakao template not approved',
  '3104': 'not a KakaoTalk user',
  '3108': 'text does not match the kakao template',
}

/** Kakao's limit on a notice's text, in characters (docs/provider.md#alimtalk-notices). */
const ALIMTALK_MAX_CHARS = 1000

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
  const { to, from, text, type, subject, kakaoOptions, customFields } = raw
  if (typeof to !== 'string' || !/^\d{8,12}$/.test(to)) throw new ValidationError(`${where}.to must be digits`)
  if (typeof from !== 'string' || !/^\d{8,11}$/.test(from)) throw new ValidationError(`${where}.from must be digits`)
  if (typeof text !== 'string' || text === '') throw new ValidationError(`${where}.text is required`)
  if (type !== 'SMS' && type !== 'LMS' && type !== 'ATA') throw new ValidationError(`${where}.type must be SMS, LMS or ATA`)
  if ((type === 'ATA') !== (kakaoOptions !== undefined)) throw new ValidationError(`${where}.kakaoOptions goes with type ATA only`)
  const kakao = type === 'ATA' ? parseKakaoOptions(kakaoOptions, `${where}.kakaoOptions`) : undefined
  if (subject !== undefined) {
    if (type !== 'LMS') throw new ValidationError(`${where}.subject is not allowed for ${type}`)
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
  return {
    to,
    from,
    text,
    type,
    ...(subject === undefined ? {} : { subject }),
    ...(kakao === undefined ? {} : { kakaoOptions: kakao }),
    customFields: fields,
  }
}

/** An ATA message's kakaoOptions: the SDK's shape, every variable's key and value a string. */
function parseKakaoOptions(raw: unknown, where: string): FakeKakaoOptions {
  if (!isRecord(raw)) throw new ValidationError(`${where} is not an object`)
  const { pfId, templateId, variables, disableSms } = raw
  if (typeof pfId !== 'string' || pfId === '') throw new ValidationError(`${where}.pfId is required`)
  if (typeof templateId !== 'string' || templateId === '') throw new ValidationError(`${where}.templateId is required`)
  if (disableSms !== undefined && typeof disableSms !== 'boolean') throw new ValidationError(`${where}.disableSms must be a boolean`)
  const values: Record<string, string> = {}
  if (variables !== undefined) {
    if (!isRecord(variables)) throw new ValidationError(`${where}.variables is not an object`)
    for (const [key, value] of Object.entries(variables)) {
      if (typeof value !== 'string') throw new ValidationError(`${where}.variables.${key} must be a string`)
      values[key] = value
    }
  }
  return { pfId, templateId, variables: values, ...(disableSms === undefined ? {} : { disableSms }) }
}

const ACCOUNT_ID = '26081318543200'

/** What an SDK-shaped answer entry says of its message in place of the echo. */
function sdkFields(message: FakeIncomingMessage) {
  return { to: message.to, from: message.from, type: message.type, country: '82', accountId: ACCOUNT_ID }
}

function builtInRefusal(message: FakeIncomingMessage, templates: ReadonlyMap<string, FakeKakaoTemplate>): string | null {
  if (message.type === 'ATA') return alimtalkRefusal(message, templates)
  if (message.type === 'SMS' && hasNonEucKr(message.text)) return '1029'
  return bytesOf(message.text) > (message.type === 'SMS' ? 90 : 2000) ? '1031' : null
}

/**
 * The provider checks a notice against its template at registration: the template must be the channel's and
 * APPROVED (else `3016`), and the text exactly its content with the variables substituted (else `3108`).
 */
function alimtalkRefusal(message: FakeIncomingMessage, templates: ReadonlyMap<string, FakeKakaoTemplate>): string | null {
  const options = message.kakaoOptions!
  const template = templates.get(options.templateId)
  if (!template || template.channelId !== options.pfId || template.status !== 'APPROVED') return '3016'
  const rendered = template.content.replace(/#\{[^{}]+\}/g, (placeholder) => options.variables[placeholder] ?? placeholder)
  if (rendered !== message.text) return '3108'
  return [...message.text].length > ALIMTALK_MAX_CHARS ? '1031' : null
}

function groupObject(group: FakeGroup, at: Date) {
  const taken = group.messages.filter((message) => message.statusCode === '2000').length
  return {
    groupId: group.groupId,
    status: group.status,
    count: { total: group.messages.length, registeredSuccess: taken, registeredFailed: group.messages.length - taken },
    accountId: ACCOUNT_ID,
    apiVersion: '4',
    dateCreated: at.toISOString(),
    dateUpdated: at.toISOString(),
  }
}

/** A message as the group's list shows it: everything the provider knows, the echo included when it was sent. */
function listedMessage(message: FakeSentMessage, sdk: boolean) {
  const { messageId, groupId, to, from, type, statusCode, customFields } = message
  const base = { messageId, groupId, to, from, type, statusCode, statusMessage: REFUSAL_MESSAGES[statusCode] ?? 'accepted' }
  return sdk ? { ...base, country: '82', accountId: ACCOUNT_ID } : { ...base, customFields }
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

/** Which call of the group API a method and path are, with the group they name. */
function routeOf(method: string, url: URL): { phase: FakePhase; groupId: string | null; messages: boolean } | null {
  const path = url.pathname
  if (path === GROUPS_PATH && method === 'POST') return { phase: 'create', groupId: null, messages: false }
  const match = /^\/messages\/v4\/groups\/([^/]+)(\/messages|\/send)?$/.exec(path)
  if (!match) return null
  const groupId = decodeURIComponent(match[1]!)
  if (match[2] === '/messages' && method === 'PUT') return { phase: 'add', groupId, messages: false }
  if (match[2] === '/messages' && method === 'GET') return { phase: 'read', groupId, messages: true }
  if (match[2] === '/send' && method === 'POST') return { phase: 'send', groupId, messages: false }
  if (match[2] === undefined && method === 'GET') return { phase: 'read', groupId, messages: false }
  return null
}

/** The SDK's shape of a channel and a template, fields the service does not read included. */
function kakaoChannelObject(channel: { pfId: string; searchId: string }, at: Date) {
  const date = at.toISOString()
  return { channelId: channel.pfId, searchId: channel.searchId, accountId: ACCOUNT_ID, phoneNumber: '0212345678', sharedAccountIds: [], dateCreated: date, dateUpdated: date }
}

function kakaoTemplateObject(template: FakeKakaoTemplate, at: Date) {
  const date = at.toISOString()
  const variables = Array.from(new Set(Array.from(template.content.matchAll(/#\{([^{}]+)\}/g), (match) => `#{${match[1]}}`)), (name) => ({ name }))
  const { buttons, ...rest } = template
  return {
    ...rest,
    ...(buttons === undefined ? {} : { buttons }),
    variables,
    messageType: 'BA',
    emphasizeType: 'NONE',
    securityFlag: false,
    accountId: ACCOUNT_ID,
    dateCreated: date,
    dateUpdated: date,
  }
}

function parseAddBody(text: string): { raw: unknown; messages: FakeIncomingMessage[] } | { status: number; errorCode: string; errorMessage: string } {
  try {
    const raw = JSON.parse(text) as unknown
    if (!isRecord(raw) || !Array.isArray(raw.messages)) throw new ValidationError('messages must be an array')
    if (raw.messages.length === 0) throw new ValidationError('messages must not be empty')
    if (raw.messages.length > MAX_MESSAGES) {
      return { status: 413, errorCode: 'RecipientsTooMany', errorMessage: `at most ${MAX_MESSAGES} messages` }
    }
    return { raw, messages: raw.messages.map(parseMessage) }
  } catch (error) {
    const errorMessage = error instanceof ValidationError ? error.message : 'body is not valid JSON'
    return { status: 400, errorCode: 'ValidationError', errorMessage }
  }
}

export async function startFakeExtSms(options: FakeExtSmsOptions): Promise<FakeExtSms> {
  const now = options.now ?? (() => new Date())
  const latencyMs = options.latencyMs ?? 0
  const auth = createAuthChecker(options.apiKey, options.apiSecret, now)
  const requests: FakeRequest[] = []
  const sentMessages: FakeSentMessage[] = []
  const calls: FakeCall[] = []
  const received: FakeRequest[] = []
  const groups = new Map<string, FakeGroup>()
  const kakaoChannels = new Map<string, { pfId: string; searchId: string }>()
  const kakaoTemplates = new Map<string, FakeKakaoTemplate>()
  let kakaoFailing = new Set<string>()
  const refusalList: (FakeRefusal & { handleKey: string; dateCreated: Date })[] = []
  const failingPages = new Map<number, number>()
  const refusalReads: FakeRefusals['reads'] = []
  let refusalSeq = 0
  const arrivals = new Map<FakePhase, Array<(call: FakeCall) => void>>()
  // Held answers, woken early by close() so no handler outlives the server.
  const sleepers = new Set<() => void>()
  let fault: FakeFault | null = null
  let faultCallsLeft = 0

  function faultPhase(current: FakeFault): FakePhase {
    return 'refuse' in current ? 'add' : (current.phase ?? 'create')
  }

  function takeFault(phase: FakePhase): FakeFault | null {
    if (fault === null || faultPhase(fault) !== phase) return null
    const current = fault
    faultCallsLeft -= 1
    if (faultCallsLeft <= 0) fault = null
    return current
  }

  /** Holds the answer `ms` (forever: null); false when the client went away first. */
  function hold(response: ServerResponse, ms: number | null): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      const wake = () => {
        clearTimeout(timer)
        sleepers.delete(wake)
        resolve(!response.destroyed && !response.writableEnded && response.socket !== null && !response.socket.destroyed)
      }
      if (ms !== null) timer = setTimeout(wake, ms)
      sleepers.add(wake)
      // A client that goes away (gave up, or its process was killed) ends the hold at once.
      response.on('close', () => {
        if (!response.writableEnded) wake()
      })
    })
  }

  function create(): unknown {
    const at = now()
    const group: FakeGroup = { groupId: providerId('G4V', at), status: 'PENDING', messages: [] }
    groups.set(group.groupId, group)
    return groupObject(group, at)
  }

  function add(group: FakeGroup, messages: FakeIncomingMessage[], refuse: FakeFault | null) {
    const at = now()
    const sdk = refuse !== null && 'refuse' in refuse && refuse.omitCustomFields === true
    let errorCount = 0
    const resultList = messages.map((message) => {
      const refusal = (refuse && 'refuse' in refuse ? refuse.refuse(message) : null) ?? builtInRefusal(message, kakaoTemplates)
      const stored: FakeSentMessage = { ...message, messageId: providerId('M4V', at), groupId: group.groupId, statusCode: refusal ?? '2000' }
      group.messages.push(stored)
      if (refusal !== null) errorCount += 1
      const statusMessage = refusal === null ? 'accepted' : (REFUSAL_MESSAGES[refusal] ?? 'refused')
      const echo = sdk ? sdkFields(message) : { to: message.to, customFields: message.customFields }
      return { messageId: stored.messageId, statusCode: stored.statusCode, statusMessage, ...echo }
    })
    return { errorCount, resultList }
  }

  function sendGroup(group: FakeGroup): void {
    group.status = 'SENDING'
    sentMessages.push(...group.messages.filter((message) => message.statusCode === '2000'))
  }

  function messagePage(group: FakeGroup, url: URL) {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? DEFAULT_PAGE) || DEFAULT_PAGE, MAX_PAGE)
    const startKey = url.searchParams.get('startKey')
    const from = startKey === null ? 0 : Math.max(0, group.messages.findIndex((message) => message.messageId === startKey))
    const page = group.messages.slice(from, from + limit)
    const next = group.messages[from + limit]
    const sdk = fault !== null && 'refuse' in fault && fault.omitCustomFields === true
    return {
      startKey,
      nextKey: next?.messageId ?? null,
      limit,
      messageList: Object.fromEntries(page.map((message) => [message.messageId, listedMessage(message, sdk)])),
    }
  }

  function outcomeOf(message: FakeSentMessage): FakeOutcome {
    if (message.type !== 'ATA' || !kakaoFailing.has(message.to)) return { type: message.type, statusCode: '4000' }
    if (message.kakaoOptions?.disableSms === true) return { type: 'ATA', statusCode: '3104' }
    // The fallback ("대체 발송"): the same text from the same number, as SMS when it fits 90 bytes, else LMS.
    return { type: bytesOf(message.text) <= 90 && !hasNonEucKr(message.text) ? 'SMS' : 'LMS', statusCode: '4000' }
  }

  async function handleKakao(
    request: IncomingMessage,
    response: ServerResponse,
    call: FakeCall,
    kind: 'channels' | 'templates',
    id: string,
  ): Promise<number> {
    call.phase = 'kakao'
    const authFailure = auth.check(request.headers.authorization)
    if (authFailure !== null) {
      send(response, 403, { errorCode: authFailure, errorMessage: 'authentication failed' })
      return 403
    }
    for (const listener of arrivals.get('kakao')?.splice(0) ?? []) listener(call)
    const current = takeFault('kakao')
    if (current && 'status' in current) {
      send(response, current.status, { errorCode: current.errorCode ?? ERROR_CODES[current.status] ?? 'ServerError', errorMessage: current.errorMessage ?? 'injected failure' })
      return current.status
    }
    if (current && 'hang' in current) {
      await hold(response, null)
      if (!response.writableEnded) response.destroy()
      return 0
    }
    if (current && 'timeoutMs' in current && !(await hold(response, current.timeoutMs))) return 0
    const channel = kind === 'channels' ? kakaoChannels.get(id) : undefined
    const template = kind === 'templates' ? kakaoTemplates.get(id) : undefined
    if (!channel && !template) {
      send(response, 404, { errorCode: 'NotFound', errorMessage: `no ${kind === 'channels' ? 'channel' : 'template'} ${id}` })
      return 404
    }
    send(response, 200, channel ? kakaoChannelObject(channel, now()) : kakaoTemplateObject(template!, now()))
    return 200
  }

  /** A page of the 080 list: the entries of `senderNumber` from `dateCreated[gte]`, from the one `startKey` names. */
  function handleRefusals(request: IncomingMessage, response: ServerResponse, call: FakeCall, url: URL): number {
    call.phase = 'refusals'
    const authFailure = auth.check(request.headers.authorization)
    if (authFailure !== null) {
      send(response, 403, { errorCode: authFailure, errorMessage: 'authentication failed' })
      return 403
    }
    for (const listener of arrivals.get('refusals')?.splice(0) ?? []) listener(call)
    const current = takeFault('refusals')
    if (current && 'status' in current) {
      send(response, current.status, { errorCode: current.errorCode ?? ERROR_CODES[current.status] ?? 'ServerError', errorMessage: current.errorMessage ?? 'injected failure' })
      return current.status
    }
    const query = url.searchParams
    if (query.get('type') !== 'DENIAL') {
      send(response, 400, { errorCode: 'ValidationError', errorMessage: 'type must be DENIAL' })
      return 400
    }
    const limit = Math.min(Number(query.get('limit') ?? DEFAULT_PAGE) || DEFAULT_PAGE, MAX_PAGE)
    const senderNumber = query.get('senderNumber')
    const since = query.get('dateCreated[gte]')
    const sinceTime = since === null ? null : new Date(since).getTime()
    if (sinceTime !== null && Number.isNaN(sinceTime)) {
      send(response, 400, { errorCode: 'ValidationError', errorMessage: 'dateCreated[gte] is not a date' })
      return 400
    }
    const matching = refusalList.filter(
      (entry) => (senderNumber === null || entry.senderNumber === senderNumber) && (sinceTime === null || entry.dateCreated.getTime() >= sinceTime),
    )
    const startKey = query.get('startKey')
    const from = startKey === null ? 0 : matching.findIndex((entry) => entry.handleKey === startKey)
    if (from < 0) {
      send(response, 400, { errorCode: 'ValidationError', errorMessage: `unknown startKey ${startKey}` })
      return 400
    }
    const page = Math.floor(from / limit) + 1
    const failing = failingPages.get(page)
    if (failing !== undefined) {
      failingPages.delete(page)
      send(response, failing, { errorCode: ERROR_CODES[failing] ?? 'ServerError', errorMessage: 'injected failure' })
      return failing
    }
    refusalReads.push({ senderNumber, startKey, since, limit, page })
    const at = now().toISOString()
    send(response, 200, {
      startKey,
      limit,
      nextKey: matching[from + limit]?.handleKey ?? null,
      blackList: matching.slice(from, from + limit).map((entry) => ({
        handleKey: entry.handleKey,
        type: 'DENIAL',
        senderNumber: entry.senderNumber,
        recipientNumber: entry.recipientNumber,
        dateCreated: entry.dateCreated.toISOString(),
        dateUpdated: at,
      })),
    })
    return 200
  }

  async function handle(request: IncomingMessage, response: ServerResponse, call: FakeCall): Promise<number> {
    const text = await readBody(request)
    const url = new URL(request.url ?? '/', 'http://fake')
    if (request.method === 'GET' && url.pathname === REFUSALS_PATH) return handleRefusals(request, response, call, url)
    const kakao = request.method === 'GET' ? KAKAO_PATH.exec(url.pathname) : null
    if (kakao) return handleKakao(request, response, call, kakao[1] as 'channels' | 'templates', decodeURIComponent(kakao[2]!))
    const route = routeOf(request.method ?? '', url)
    if (route === null) {
      send(response, 404, { errorCode: 'NotFound', errorMessage: `no route ${request.method} ${url.pathname}` })
      return 404
    }
    call.phase = route.phase
    const authFailure: AuthFailure | null = auth.check(request.headers.authorization)
    if (authFailure !== null) {
      send(response, 403, { errorCode: authFailure, errorMessage: 'authentication failed' })
      return 403
    }
    for (const listener of arrivals.get(route.phase)?.splice(0) ?? []) listener(call)
    const current = takeFault(route.phase)
    if (current && 'status' in current) {
      const errorCode = current.errorCode ?? ERROR_CODES[current.status] ?? 'ServerError'
      send(response, current.status, { errorCode, errorMessage: current.errorMessage ?? 'injected failure' })
      return current.status
    }
    if (current && 'hang' in current) {
      await hold(response, null)
      if (!response.writableEnded) response.destroy()
      return 0
    }

    const group = route.groupId === null ? null : groups.get(route.groupId)
    if (route.groupId !== null && !group) {
      send(response, 404, { errorCode: 'NotFound', errorMessage: `no group ${route.groupId}` })
      return 404
    }
    let answer: unknown
    if (route.phase === 'create') answer = create()
    else if (route.phase === 'add') {
      if (group!.status !== 'PENDING') {
        send(response, 400, { errorCode: 'GroupAlreadySent', errorMessage: 'messages cannot be added to a sent group' })
        return 400
      }
      const parsed = parseAddBody(text)
      if ('status' in parsed) {
        send(response, parsed.status, { errorCode: parsed.errorCode, errorMessage: parsed.errorMessage })
        return parsed.status
      }
      const addCall = { body: { messages: parsed.messages }, raw: parsed.raw, headers: request.headers }
      received.push(addCall)
      answer = add(group!, parsed.messages, current)
      requests.push(addCall)
    } else if (route.phase === 'send') {
      if (group!.status !== 'PENDING') {
        send(response, 400, { errorCode: 'GroupAlreadySent', errorMessage: 'a group is sent once' })
        return 400
      }
      sendGroup(group!)
      answer = groupObject(group!, now())
    } else answer = route.messages ? messagePage(group!, url) : groupObject(group!, now())

    // The call has taken effect; a slow provider only answers late, and a client that gave up never hears.
    if (current && 'timeoutMs' in current && !(await hold(response, current.timeoutMs))) return 0
    if (latencyMs > 0 && !(await hold(response, latencyMs))) return 0
    send(response, 200, answer)
    return 200
  }

  const server = createServer((request, response) => {
    const call: FakeCall = { method: request.method ?? '', path: request.url ?? '', phase: null, status: 0, headers: request.headers }
    handle(request, response, call)
      .then((status) => {
        call.status = status
        calls.push(call)
      })
      .catch(() => {
        if (!response.headersSent) send(response, 500, { errorCode: 'InternalError', errorMessage: 'fake failed' })
      })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    kakao: {
      addChannel(pfId, searchId = `@${pfId.toLowerCase()}`) {
        kakaoChannels.set(pfId, { pfId, searchId })
      },
      putTemplate(template) {
        kakaoTemplates.set(template.templateId, structuredClone(template))
      },
      failFor(numbers) {
        kakaoFailing = new Set(numbers)
      },
    },
    refusals: {
      add(...refusals) {
        for (const refusal of refusals) {
          refusalSeq += 1
          const handleKey = `HK${String(refusalSeq).padStart(12, '0')}`
          refusalList.push({ ...refusal, handleKey, dateCreated: refusal.dateCreated ?? now() })
        }
        // Oldest first, as the provider lists them; entries of one instant keep the order they were added in.
        refusalList.sort((a, b) => a.dateCreated.getTime() - b.dateCreated.getTime() || a.handleKey.localeCompare(b.handleKey))
      },
      failPage(page, status = 500) {
        failingPages.set(page, status)
      },
      reads: refusalReads,
    },
    outcomeOf,
    reportOf(message) {
      const { type, statusCode } = outcomeOf(message)
      const statusMessage = statusCode === '4000' ? 'delivered' : (REFUSAL_MESSAGES[statusCode] ?? 'failed')
      return deliveryReport({ ...message, type }, { statusCode, statusMessage })
    },
    requests,
    sentMessages,
    calls,
    received,
    groups,
    holding: () => sleepers.size,
    arrival(phase) {
      return new Promise((resolve) => {
        const waiting = arrivals.get(phase) ?? []
        waiting.push(resolve)
        arrivals.set(phase, waiting)
      })
    },
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
