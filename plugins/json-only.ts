import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../lib/errors.js'

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

/** Every body this service accepts is JSON in UTF-8; anything else answers 415 instead of reaching a schema as text. */
export default fp(
  async (app) => {
    app.removeContentTypeParser(['text/plain'])
    // Before any parser runs, so a route's own parser (the signed /internal one, refresh's) is covered as well.
    app.addHook('preParsing', async (request) => {
      const reason = undecodableBody(request)
      if (reason) throw new AppError('UNSUPPORTED_MEDIA_TYPE', reason)
    })
  },
  { name: 'json-only' },
)
