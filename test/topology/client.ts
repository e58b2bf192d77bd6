import { createHash, createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto'
import { checkDigit } from '../../lib/tenancy/business-number.js'
import { HMAC_SECRET } from './stack.js'

/** A plain HTTP client for the topology suite: real sockets, tokens kept by hand (the cookies are Secure). */

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** The parsed JSON body, or undefined when there is none or it is not JSON. */
  json: any
  /** HAProxy's X-Served-By: the instance that answered (absent when the call bypassed HAProxy). */
  servedBy: string | null
}

export interface CallOptions {
  token?: string
  cookies?: Record<string, string>
  headers?: Record<string, string>
  body?: unknown
  idempotencyKey?: string
}

export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  if (options.cookies) {
    headers.cookie = Object.entries(options.cookies)
      .map(([name, value]) => `${name}=${value}`)
      .join('; ')
  }
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey
  let body: string | undefined
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
  }
  const response = await fetchRetryingIdempotent(`${base}${path}`, { method, headers, body, signal: AbortSignal.timeout(20_000) })
  const text = await response.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json, servedBy: response.headers.get('x-served-by') }
}

/**
 * fetch, sent again once on a new connection when it was an idempotent request (GET, HEAD) whose kept-alive
 * connection closed as it went out, as browsers and HTTP client libraries do. HAProxy closes a client's idle
 * connection whose server connection died (an instance killed a moment ago): a request racing that close fails
 * without an answer ("other side closed"), which says nothing about the service.
 */
async function fetchRetryingIdempotent(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown } }).cause
    if (!['GET', 'HEAD'].includes(init.method ?? 'GET') || cause?.code !== 'UND_ERR_SOCKET') throw error
    return fetch(url, init)
  }
}

/** A cookie the answer set (`Set-Cookie`), by name. */
export function cookie(reply: Reply, name: string): string | undefined {
  for (const line of reply.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const at = pair!.indexOf('=')
    if (pair!.slice(0, at).trim() === name) return pair!.slice(at + 1)
  }
  return undefined
}

export interface Tokens {
  access: string
  refresh: string
}

export function tokensOf(reply: Reply): Tokens {
  const access = cookie(reply, 'svc_access_token')
  const refresh = cookie(reply, 'svc_refresh_token')
  if (!access || !refresh) throw new Error(`no token cookies in answer ${reply.status}: ${reply.text}`)
  return { access, refresh }
}

export function expectStatus(reply: Reply, status: number, what: string): Reply {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${reply.text}`)
  return reply
}

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`
}

export const newKey = (): string => randomUUID()

function validBusinessNumber(): string {
  const first9 = Array.from({ length: 9 }, () => randomInt(10)).join('')
  return `${first9}${checkDigit(first9)}`
}

export interface Owner {
  loginId: string
  password: string
  userId: number
  tenantId: number
  tenantSlug: string
  /** The tokens of the owner's login (the registration's session is replaced by it). */
  tokens: Tokens
}

/** Registers an academy and its owner, then signs in with the root entry, as a client would. */
export async function registerOwner(base: string): Promise<Owner> {
  const loginId = unique('owner')
  const password = `Pw-${randomBytes(6).toString('hex')}-42`
  const registered = expectStatus(
    await call(base, 'POST', '/v1/register/owner', {
      body: {
        instituteName: 'Topology Academy',
        businessRegistrationNumber: validBusinessNumber(),
        userLoginId: loginId,
        password,
        name: 'Topology Owner',
      },
    }),
    201,
    'owner registration',
  )
  const user = registered.json.user as { id: number; tenantId: number; tenantSlug: string }
  const login = expectStatus(
    await call(base, 'POST', '/v1/login', { body: { userLoginId: loginId, password } }),
    200,
    'owner login',
  )
  return { loginId, password, userId: user.id, tenantId: user.tenantId, tenantSlug: user.tenantSlug, tokens: tokensOf(login) }
}

/**
 * Gives the tenant an APPROVED sender number the way operations do: the owner enters it, then the signed internal
 * approval (docs/api.md#signed-internal-calls) records the provider's verification. A number of its own by default: one
 * APPROVED for another tenant is refused.
 */
export async function approveSender(base: string, owner: Owner, senderNumber = `02${randomInt(20_000_000, 100_000_000)}`): Promise<void> {
  expectStatus(
    await call(base, 'PUT', '/v1/sms/sender-setting', { token: owner.tokens.access, body: { senderNumber } }),
    200,
    'sender number',
  )
  const path = `/internal/sms/sender-settings/${owner.tenantSlug}/approval`
  const body = JSON.stringify({ registrationStatus: 'APPROVED' })
  const timestamp = String(Math.floor(Date.now() / 1000))
  const bodyHash = createHash('sha256').update(body).digest('hex')
  const signature = createHmac('sha256', HMAC_SECRET)
    .update(`${timestamp}\nPATCH\n${path}\n${owner.tenantSlug}\n${bodyHash}`)
    .digest('hex')
  expectStatus(
    await call(base, 'PATCH', path, {
      body,
      headers: { 'x-tenant-slug': owner.tenantSlug, 'x-timestamp': timestamp, 'x-signature': signature },
    }),
    200,
    'sender approval',
  )
}

/** `count` distinct valid mobile numbers starting at `offset`, hyphenated as people type them. */
export function phones(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, index) => {
    const digits = String(100_000_000 + offset + index).slice(1)
    return `010-${digits.slice(0, 4)}-${digits.slice(4)}`
  })
}

export function recipients(count: number, offset = 0): { phone: string; name: string }[] {
  return phones(count, offset).map((phone, index) => ({ phone, name: `Guardian ${offset + index}` }))
}

/** Runs `tasks` with at most `concurrency` in flight; results in task order. */
export async function runConcurrently<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++
      results[index] = await tasks[index]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker))
  return results
}
