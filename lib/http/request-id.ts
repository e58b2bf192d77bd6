import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const REQUEST_ID_HEADER = 'x-request-id'

// 1-128 visible ASCII characters: an id an upstream proxy or client chose is kept for tracing across services;
// anything else (empty, too long, spaces, control or non-ASCII bytes) could forge log lines or blow up labels.
const ACCEPTABLE_ID = /^[\x21-\x7e]{1,128}$/

/** Fastify's genReqId: the caller's `X-Request-Id` when acceptable, else a random UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const presented = request.headers[REQUEST_ID_HEADER]
  return typeof presented === 'string' && ACCEPTABLE_ID.test(presented) ? presented : randomUUID()
}
