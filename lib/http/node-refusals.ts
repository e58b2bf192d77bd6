import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError } from '../errors.js'
import { PROBLEM_CONTENT_TYPE, problemBody } from './problem.js'

/**
 * Writes a catalog problem straight to Node's response and closes the connection, as Node itself would have
 * answered: no route has taken the request, so no route's hooks or documented problems apply (no request id).
 * Closed, because a client that framed this request wrongly may frame what follows just as badly.
 */
function answerRaw(response: ServerResponse, problem: AppError): void {
  const body = JSON.stringify(problemBody(problem))
  response.writeHead(problem.status, {
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
  })
  response.end(body)
}

/**
 * HTTP/1.1 requires a Host header, and a server must refuse a request without one (RFC 9112, section 3.2). Node does
 * it itself with an empty 400, so the server turns that check off (lib/http/server-options.ts) and this one answers
 * from the catalog instead. HTTP/1.0 had no Host. Returns whether the request was answered.
 */
export function refuseMissingHost(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.httpVersion !== '1.1' || request.headers.host !== undefined) return false
  answerRaw(response, new AppError('VALIDATION_FAILED', 'An HTTP/1.1 request must carry a Host header.'))
  return true
}

/**
 * Node's 'checkExpectation' listener: an `Expect` other than `100-continue` reaches no route (Node would answer an
 * empty 417), and its body, if the client sends one anyway, is never read.
 */
export function answerExpectation(_request: IncomingMessage, response: ServerResponse): void {
  answerRaw(response, new AppError('EXPECTATION_FAILED', 'Only Expect: 100-continue is supported; send the request without Expect.'))
}
