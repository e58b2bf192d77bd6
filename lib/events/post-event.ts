import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'

/** Where one attempt goes: the endpoint's URL, and the address its host was resolved to and checked as. */
export interface PinnedTarget {
  url: URL
  address: string
}

export type PostOutcome = { status: number } | { error: string }

/** Connections stay open between deliveries to the same receivers; one pool per deliverer. */
export interface Agents {
  http: http.Agent
  https: https.Agent
}

export function keepAliveAgents(maxSockets: number): Agents {
  return {
    http: new http.Agent({ keepAlive: true, maxSockets }),
    https: new https.Agent({ keepAlive: true, maxSockets }),
  }
}

/**
 * The connection goes to `address` only, whatever the host name resolves to by the time the socket opens: the name
 * was checked against that address (lib/events/address-policy.ts), and a second lookup could answer another one
 * (DNS rebinding). Node asks for every address when it races IPv4 and IPv6, hence both callback shapes.
 */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address)
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) {
      ;(callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }])
    } else {
      callback(null, address, family)
    }
  }
}

/** What is read of an answer's body (to reuse the connection) before the connection is closed instead. */
const MAX_ANSWER_BODY_BYTES = 64 * 1024

/**
 * POSTs `body` and answers the status of the response's head (its body is read and dropped), or the error. Redirects
 * are not followed: a 3xx is an answer like any other non-2xx, so a receiver cannot send the service on to another
 * address. `timeoutMs` bounds the whole exchange, connecting and the answer's body included: whatever the receiver
 * does (no answer, a head then a stalled body, a trickle), the connection is closed then and the promise settles, so
 * a receiver costs one worker that long and no more; `abandon` ends it sooner (shutdown). TLS verifies the
 * certificate against the URL's host name.
 */
export function postEvent(
  target: PinnedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  agents: Agents,
  abandon?: AbortSignal,
): Promise<PostOutcome> {
  const secure = target.url.protocol === 'https:'
  const send = secure ? https.request : http.request
  return new Promise((resolve) => {
    let outcome: PostOutcome | null = null
    const request = send(target.url, {
      method: 'POST',
      agent: secure ? agents.https : agents.http,
      lookup: pinnedLookup(target.address),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'svc-webhooks/1',
        ...headers,
      },
    })
    // A timer of the exchange's own, not AbortSignal.timeout: on Node 20 the garbage collector may take a timeout
    // signal combined by AbortSignal.any before it fires, and the request then waits for ever (a worker lost).
    const limit = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const onAbandon = () => request.destroy(new Error('abandoned: the service is stopping'))
    if (abandon?.aborted) onAbandon()
    else abandon?.addEventListener('abort', onAbandon, { once: true })
    request.on('response', (response) => {
      outcome = { status: response.statusCode ?? 0 }
      let read = 0
      response.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_ANSWER_BODY_BYTES) request.destroy()
      })
    })
    request.on('error', (error: Error) => (outcome ??= { error: error.message }))
    // Emitted once the answer was read to its end or the connection closed, whichever way the exchange ended.
    request.on('close', () => {
      clearTimeout(limit)
      abandon?.removeEventListener('abort', onAbandon)
      resolve(outcome ?? { error: 'the connection closed without an answer' })
    })
    request.end(body)
  })
}
