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
 * was checked against that address (lib/webhooks/address-policy.ts), and a second lookup could answer another one
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

/**
 * POSTs `body` and answers the status as soon as the response's head arrives (its body is never read), or the error.
 * Redirects are not followed: a 3xx is an answer like any other non-2xx, so a receiver cannot send the service on to
 * another address. `timeoutMs` bounds the whole exchange, connecting included: a receiver that hangs costs one
 * worker that long and no more; `abandon` ends it sooner (shutdown). TLS verifies the certificate against the URL's
 * host name.
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
    const request = send(
      target.url,
      {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        lookup: pinnedLookup(target.address),
        signal: abandon ? AbortSignal.any([AbortSignal.timeout(timeoutMs), abandon]) : AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'svc-webhooks/1',
          ...headers,
        },
      },
      (response) => {
        resolve({ status: response.statusCode ?? 0 })
        response.resume()
      },
    )
    request.on('error', (error: Error) =>
      resolve({ error: error.name === 'AbortError' || error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : error.message }),
    )
    request.end(body)
  })
}
