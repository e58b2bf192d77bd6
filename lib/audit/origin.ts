import type { FastifyRequest } from 'fastify'
import type { AuditOrigin } from './record.js'

/**
 * Who is acting in this request and from where: the signed-in caller by default (null on public routes and signed
 * operations calls), the client address and the request id. For events written outside request.db (login).
 */
export function auditOriginOf(request: FastifyRequest, actorId: number | null = request.identity?.userId ?? null): AuditOrigin {
  return { actorId, ipAddress: request.ip ?? null, requestId: request.id, apiKeyId: request.identity?.apiKeyId ?? null }
}
