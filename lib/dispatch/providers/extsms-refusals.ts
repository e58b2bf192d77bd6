import type { ExtSmsOptions } from './extsms.js'
import { extSmsRead } from './extsms-read.js'
import { failureOf, isObject, nonEmptyString, parseJson } from './extsms-response.js'
import type { Refusal, RefusalList, RefusalPage, RefusalQuery } from './refusal-list.js'

/** The live provider's 080 refusal list (docs/provider.md#the-080-refusal-list), signed like every other call. */

export const EXTSMS_REFUSALS_PATH = '/iam/v1/black'

function readRefusal(value: unknown): Refusal | null {
  if (!isObject(value) || value.type !== 'DENIAL') return null
  const handleKey = nonEmptyString(value.handleKey)
  const senderNumber = nonEmptyString(value.senderNumber)
  const recipientNumber = nonEmptyString(value.recipientNumber)
  const created = nonEmptyString(value.dateCreated)
  const dateCreated = created === null ? null : new Date(created)
  if (handleKey === null || senderNumber === null || recipientNumber === null) return null
  if (dateCreated === null || Number.isNaN(dateCreated.getTime())) return null
  return { handleKey, senderNumber, recipientNumber, dateCreated }
}

/** A page, or null when the answer is not one: an unreadable page must not be taken for the end of the list. */
function readPage(text: string): { refusals: Refusal[]; nextKey: string | null } | null {
  const body = parseJson(text)
  if (!isObject(body) || !Array.isArray(body.blackList)) return null
  const refusals: Refusal[] = []
  for (const entry of body.blackList) {
    const refusal = readRefusal(entry)
    if (refusal === null) return null
    refusals.push(refusal)
  }
  if (body.nextKey !== null && body.nextKey !== undefined && nonEmptyString(body.nextKey) === null) return null
  return { refusals, nextKey: nonEmptyString(body.nextKey) }
}

export function createExtSmsRefusalList(options: ExtSmsOptions): RefusalList {
  const base = `${options.baseUrl.replace(/\/+$/, '')}${EXTSMS_REFUSALS_PATH}`

  return {
    name: 'extsms',
    async readPage(query: RefusalQuery): Promise<RefusalPage> {
      const params = new URLSearchParams({ type: 'DENIAL', senderNumber: query.senderNumber, limit: String(query.limit) })
      if (query.startKey !== null) params.set('startKey', query.startKey)
      if (query.since !== null) params.set('dateCreated[gte]', query.since.toISOString())
      const answer = await extSmsRead(options, `${base}?${params.toString()}`)
      if ('error' in answer) return { kind: 'retryable', error: answer.error }
      const { status, text } = answer
      if (status < 200 || status >= 300) return failureOf(status, text)
      const page = readPage(text)
      if (page === null) return { kind: 'retryable', error: `unreadable ${status} answer to reading the 080 list from the provider` }
      return { kind: 'ok', ...page }
    },
  }
}
