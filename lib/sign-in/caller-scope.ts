import type { FastifyRequest } from 'fastify'
import type { RequestScope } from '../../db/tenant-transaction.js'

/**
 * The signed-in caller for work done before the request transaction opens (a route's proof): the transaction that
 * work opens checks the access token again (`accessJti`), as the request's own would.
 */
export function callerScope(request: FastifyRequest): RequestScope & { tenantId: number; userId: number } {
  const { tenantId, userId, apiKeyId } = request.caller
  return { tenantId, userId, accessJti: request.accessJti, apiKeyId }
}
