import { authorizationHeader } from './extsms-auth.js'
import { describeFailure, type ExtSmsOptions } from './extsms.js'
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
  const { apiKey, apiSecret, timeoutMs = 10_000, fetch = globalThis.fetch } = options
  const base = `${options.baseUrl.replace(/\/+$/, '')}${EXTSMS_KAKAO_PATH}`

  async function get<T>(what: string, path: string, read: (text: string) => T | null): Promise<KakaoRead<T>> {
    let status: number
    let text: string
    try {
      const response = await fetch(`${base}${path}`, {
        method: 'GET',
        // Signed per call: the provider rejects a signature it has seen before.
        headers: { authorization: authorizationHeader(apiKey, apiSecret), accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
        // Following a redirect would replay the signed request to another host.
        redirect: 'manual',
      })
      status = response.status
      text = await response.text()
    } catch (error) {
      return { kind: 'retryable', error: describeFailure(error, timeoutMs) }
    }
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
