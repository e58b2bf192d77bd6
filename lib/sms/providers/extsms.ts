import { authorizationHeader } from './extsms-auth.js'
import { assertSendable, sendBody } from './extsms-request.js'
import { classifyResponse } from './extsms-response.js'
import type { SendResult, SmsProvider } from './provider.js'

/** The live provider adapter (docs/provider.md): one signed HTTP call per send, classified into a SendResult. */

export const EXTSMS_SEND_PATH = '/messages/v4/send-many/detail'

export interface ExtSmsOptions {
  apiKey: string
  apiSecret: string
  baseUrl: string
  timeoutMs?: number
  fetch?: typeof globalThis.fetch
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer from the provider within ${timeoutMs} ms`
  }
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED, ENOTFOUND, ...) in `cause`.
  const cause = error instanceof Error ? error.cause : undefined
  if (cause instanceof Error) return `network error: ${(cause as NodeJS.ErrnoException).code ?? cause.message}`
  return `network error: ${error instanceof Error ? error.message : String(error)}`
}

export function createExtSmsProvider(options: ExtSmsOptions): SmsProvider {
  const { apiKey, apiSecret, timeoutMs = 10_000, fetch = globalThis.fetch } = options
  const url = `${options.baseUrl.replace(/\/+$/, '')}${EXTSMS_SEND_PATH}`

  return {
    name: 'extsms',
    async send(request): Promise<SendResult> {
      assertSendable(request)
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            // Signed per call: the provider rejects a signature it has seen before, retries included.
            authorization: authorizationHeader(apiKey, apiSecret),
            'content-type': 'application/json',
            accept: 'application/json',
          },
          body: JSON.stringify(sendBody(request)),
          // The timeout covers reading the body too, so a provider that stalls mid-answer is also retryable.
          signal: AbortSignal.timeout(timeoutMs),
          // Following a redirect would replay the signed request to another host; an unexpected 3xx is rejected.
          redirect: 'manual',
        })
        const text = await response.text()
        return classifyResponse(response.status, text, request.messages)
      } catch (error) {
        return { kind: 'retryable', error: describeFailure(error, timeoutMs) }
      }
    },
  }
}
