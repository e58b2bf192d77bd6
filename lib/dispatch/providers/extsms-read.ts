import { authorizationHeader } from './extsms-auth.js'
import { describeFailure, type ExtSmsOptions } from './extsms.js'

/** What a read call brought back: the answer's status and text, or why no answer came (a retryable failure). */
export type ExtSmsAnswer = { status: number; text: string } | { error: string }

/**
 * One signed GET of the provider's read APIs (Kakao channels and templates, the 080 refusal list). Signed per call,
 * since the provider rejects a signature it has seen before; redirects are not followed, since following one would
 * replay the signed request to another host; bounded by the options' time limit.
 */
export async function extSmsRead(options: ExtSmsOptions, url: string): Promise<ExtSmsAnswer> {
  const { apiKey, apiSecret, timeoutMs = 10_000, fetch = globalThis.fetch } = options
  try {
    const response = await fetch(url, {
      method: 'GET',
      headers: { authorization: authorizationHeader(apiKey, apiSecret), accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    })
    return { status: response.status, text: await response.text() }
  } catch (error) {
    return { error: describeFailure(error, timeoutMs) }
  }
}
