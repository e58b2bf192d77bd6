import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../lib/errors.js'
import { nestsDeeperThan, tooDeep } from '../../lib/http/json-depth.js'

const CHARSET = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i

/**
 * Why a body cannot be read as this service's JSON, or null. The parser decodes UTF-8 and nothing else: a body
 * declared in another charset or sent compressed would otherwise be read as if it were plain UTF-8.
 */
export function undecodableBody(request: FastifyRequest): string | null {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase()
  if (encoding && encoding !== 'identity') return `Content-Encoding ${encoding.slice(0, 40)} is not accepted; send the body uncompressed.`
  const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[2]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return `charset ${charset.slice(0, 40)} is not accepted; send the body as UTF-8 JSON.`
  }
  return null
}

type ParseDone = (error: Error | null, value?: unknown) => void

/**
 * Every body this service accepts is JSON in UTF-8; anything else answers 415 instead of reaching a schema as text.
 * JSON nested deeper than MAX_JSON_DEPTH is refused on its raw bytes, before the parser and every recursive walk
 * after it (validation, the well-formed text pass) could overflow the stack. A subtree with a parser of its own
 * (plugins/platform/internal-signature.ts) makes the same check there.
 */
export default fp(
  async (app) => {
    app.removeContentTypeParser(['text/plain'])
    // Fastify's own parser (prototype-poisoning protection as configured), applied once the depth is known to be safe.
    const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig
    const parseJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning) as unknown as (
      request: FastifyRequest,
      body: Buffer,
      done: ParseDone,
    ) => void
    app.removeContentTypeParser('application/json')
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      if (nestsDeeperThan(body as Buffer)) done(tooDeep(), undefined)
      else parseJson(request, body as Buffer, done)
    })
    // Before any parser runs, so a route's own parser (the signed /internal one, refresh's) is covered as well.
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays).
    app.addHook('preParsing', (request, _reply, payload, done) => {
      const reason = undecodableBody(request)
      done(reason ? new AppError('UNSUPPORTED_MEDIA_TYPE', reason) : null, payload)
    })
  },
  { name: 'json-only' },
)
