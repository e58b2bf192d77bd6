import type { FastifyRequest } from 'fastify'
import type { AuditOrigin } from '../audit/record.js'
import type { ClientInfo } from './deps.js'
import { deviceCategory } from './device-category.js'

export function clientInfo(request: FastifyRequest): ClientInfo {
  const header = request.headers['x-device-category']
  const userAgent = request.headers['user-agent']
  return {
    deviceCategory: deviceCategory(typeof header === 'string' ? header : undefined, userAgent),
    userAgent: userAgent ?? null,
    ipAddress: request.ip ?? null,
    requestId: request.id,
  }
}

/**
 * The audit origin of what this client did before anyone was signed in (login, registration): `actorId` is the
 * user the act proved (a successful login), or null for an anonymous one (a failed login, a registration).
 */
export function clientOrigin(client: ClientInfo, actorId: number | null): AuditOrigin {
  return { actorId, ipAddress: client.ipAddress, requestId: client.requestId }
}
