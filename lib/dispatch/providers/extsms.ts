import { authorizationHeader } from './extsms-auth.js'
import { addBody, assertSendable, CREATE_GROUP_BODY } from './extsms-request.js'
import { failureOf, matchEntries, parseAddAnswer, parseGroup, parseMessagePage } from './extsms-response.js'
import type { CallFailure, CallResult, GroupEntry, GroupReadback, SmsProvider } from './provider.js'

/**
 * The live provider adapter (docs/provider.md): the group API, one signed HTTP call per phase, each answer read into
 * a CallResult. The adapter keeps no state: the dispatcher records the group id before any message is added.
 */

export const EXTSMS_GROUPS_PATH = '/messages/v4/groups'
/** Messages per page when a group is read back. */
const READ_PAGE_SIZE = 500
/** A group of 10,000 messages is 20 pages; more means an answer that never ends its paging. */
const MAX_READ_PAGES = 1_000

export interface ExtSmsOptions {
  apiKey: string
  apiSecret: string
  baseUrl: string
  /** SVC_SMS_PROVIDER_TIMEOUT_MS: the time limit of one call, reading the answer included. */
  timeoutMs?: number
  fetch?: typeof globalThis.fetch
}

type Answer = { status: number; text: string } | CallFailure

export function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer from the provider within ${timeoutMs} ms`
  }
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED, ENOTFOUND, ...) in `cause`.
  const cause = error instanceof Error ? error.cause : undefined
  if (cause instanceof Error) return `network error: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`
  return `network error: ${error instanceof Error ? error.message : String(error)}`
}

const unreadable = (what: string, status: number): CallFailure => ({
  kind: 'retryable',
  error: `unreadable ${status} answer to ${what} from the provider`,
})

export function createExtSmsProvider(options: ExtSmsOptions): SmsProvider {
  const { apiKey, apiSecret, timeoutMs = 10_000, fetch = globalThis.fetch } = options
  const groupsUrl = `${options.baseUrl.replace(/\/+$/, '')}${EXTSMS_GROUPS_PATH}`

  async function call(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<Answer> {
    try {
      const response = await fetch(`${groupsUrl}${path}`, {
        method,
        headers: {
          // Signed per call: the provider rejects a signature it has seen before, retries included.
          authorization: authorizationHeader(apiKey, apiSecret),
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // The time limit covers reading the body too, so a provider that stalls mid-answer is retryable as well.
        signal: AbortSignal.timeout(timeoutMs),
        // Following a redirect would replay the signed request to another host; an unexpected 3xx is refused.
        redirect: 'manual',
      })
      return { status: response.status, text: await response.text() }
    } catch (error) {
      return { kind: 'retryable', error: describeFailure(error, timeoutMs) }
    }
  }

  /** A 2xx answer read by `read` (null: unreadable), or the call's failure. */
  async function answered<T>(what: string, answer: Answer, read: (text: string) => T | null): Promise<CallResult<T>> {
    if ('kind' in answer) return answer
    if (answer.status < 200 || answer.status >= 300) return failureOf(answer.status, answer.text)
    const value = read(answer.text)
    return value === null ? unreadable(what, answer.status) : { kind: 'ok', ...value }
  }

  async function readMessages(groupId: string): Promise<CallResult<{ list: unknown[] }>> {
    const list: unknown[] = []
    let startKey: string | null = null
    for (let page = 0; page < MAX_READ_PAGES; page++) {
      const query = `?limit=${READ_PAGE_SIZE}${startKey === null ? '' : `&startKey=${encodeURIComponent(startKey)}`}`
      const answer = await call('GET', `/${encodeURIComponent(groupId)}/messages${query}`)
      const read = await answered('reading the group messages', answer, parseMessagePage)
      if (read.kind !== 'ok') return read
      list.push(...read.entries)
      if (read.nextKey === null || read.nextKey === startKey) return { kind: 'ok', list }
      startKey = read.nextKey
    }
    return { kind: 'retryable', error: `the group's messages did not end within ${MAX_READ_PAGES} pages` }
  }

  return {
    name: 'extsms',
    callTimeoutMs: timeoutMs,
    async createGroup() {
      const answer = await call('POST', '', CREATE_GROUP_BODY)
      const created = await answered('creating a group', answer, parseGroup)
      return created.kind === 'ok' ? { kind: 'ok', groupId: created.groupId } : created
    },
    async addMessages(groupId, request) {
      assertSendable(request)
      const answer = await call('PUT', `/${encodeURIComponent(groupId)}/messages`, addBody(request))
      return answered('adding messages', answer, (text) => {
        const list = parseAddAnswer(text)
        return list === null ? null : { entries: matchEntries(list, request.messages) }
      })
    },
    async sendGroup(groupId) {
      const answer = await call('POST', `/${encodeURIComponent(groupId)}/send`)
      return answered('sending the group', answer, (text) => (parseGroup(text) === null ? null : {}))
    },
    async readGroup(groupId, recipients): Promise<GroupReadback> {
      const answer = await call('GET', `/${encodeURIComponent(groupId)}`)
      if (!('kind' in answer) && answer.status === 404) return { kind: 'missing' }
      const group = await answered('reading the group', answer, parseGroup)
      if (group.kind !== 'ok') return group
      const messages = await readMessages(groupId)
      if (messages.kind !== 'ok') return messages
      const entries: GroupEntry[] = matchEntries(messages.list, recipients)
      return { kind: 'ok', sent: group.sent, entries }
    },
  }
}
