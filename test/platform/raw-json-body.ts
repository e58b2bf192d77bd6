import type { FastifyInstance, HTTPMethods } from 'fastify'

/**
 * Sends `text` as the body, declared as JSON, exactly as written: for bodies no object could serialise to
 * (malformed JSON, `null`, a bare string or number, an empty body) and for bodies of a chosen size.
 */
export function injectJsonText(
  app: FastifyInstance,
  request: { method: HTTPMethods; url: string; headers?: Record<string, string> },
  text: string,
) {
  return app.inject({ ...request, headers: { ...request.headers, 'content-type': 'application/json' }, payload: text })
}
