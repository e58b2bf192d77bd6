import type { FastifyInstance } from 'fastify'
import { INTERNAL_BODY_LIMIT } from '../../lib/http/body-limits.js'

/**
 * Everything under /internal is an operations call signed over its raw body (docs/api.md#signed-internal-calls):
 * this subtree parses JSON itself to keep those bytes, and a route that declares another access fails at start-up
 * rather than answering unsigned calls.
 */
export default async function signedOnly(app: FastifyInstance): Promise<void> {
  // Operations calls are small; the limit keeps an unauthenticated caller from making the server hash megabytes.
  // The root JSON parser (plugins/platform/json-only.ts) is replaced here, not added to: Fastify refuses a second one.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: INTERNAL_BODY_LIMIT }, app.signedJsonParser)
  app.addHook('onRoute', (route) => {
    if (route.config?.access !== 'internal-signed') {
      throw new Error(`${route.method} ${route.url}: /internal routes must be signed ({ access: 'internal-signed' })`)
    }
  })
}
