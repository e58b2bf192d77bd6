import type { ExtSmsOptions } from './extsms.js'
import { extSmsRead } from './extsms-read.js'
import { failureOf, isObject, nonEmptyString, parseJson } from './extsms-response.js'
import { KAKAO_TEMPLATE_STATUSES, type KakaoChannel, type KakaoRead, type KakaoReads, type KakaoTemplate } from './kakao-reads.js'

/** The live provider's Kakao reads (docs/provider.md#kakao-reads), signed like every other call. */

export const EXTSMS_KAKAO_PATH = '/kakao/v2'

function readChannel(text: string): KakaoChannel | null {
  const body = parseJson(text)
  if (!isObject(body)) return null
  const pfId = nonEmptyString(body.channelId)
  const searchId = nonEmptyString(body.searchId)
  return pfId === null || searchId === null ? null : { pfId, searchId }
}

function readTemplate(text: string): KakaoTemplate | null {
  const body = parseJson(text)
  if (!isObject(body)) return null
  const templateId = nonEmptyString(body.templateId)
  const channelId = nonEmptyString(body.channelId)
  const name = nonEmptyString(body.name)
  const content = nonEmptyString(body.content)
  const status = KAKAO_TEMPLATE_STATUSES.find((known) => known === body.status)
  // The SDK declares buttons optional; null and absent both mean none.
  const buttons = body.buttons ?? []
  if (templateId === null || channelId === null || name === null || content === null) return null
  if (status === undefined || !Array.isArray(buttons)) return null
  return { templateId, channelId, name, content, status, buttons }
}

export function createExtSmsKakaoReads(options: ExtSmsOptions): KakaoReads {
  const base = `${options.baseUrl.replace(/\/+$/, '')}${EXTSMS_KAKAO_PATH}`

  async function get<T>(what: string, path: string, read: (text: string) => T | null): Promise<KakaoRead<T>> {
    const answer = await extSmsRead(options, `${base}${path}`)
    if ('error' in answer) return { kind: 'retryable', error: answer.error }
    const { status, text } = answer
    if (status === 404) return { kind: 'unknown' }
    if (status < 200 || status >= 300) return failureOf(status, text)
    const value = read(text)
    return value === null ? { kind: 'retryable', error: `unreadable ${status} answer to ${what} from the provider` } : { kind: 'found', value }
  }

  return {
    name: 'extsms',
    readChannel: (pfId) => get('reading a Kakao channel', `/channels/${encodeURIComponent(pfId)}`, readChannel),
    readTemplate: (templateId) => get('reading a Kakao template', `/templates/${encodeURIComponent(templateId)}`, readTemplate),
  }
}
