import type { FastifyRequest } from 'fastify'
import type { ClientInfo } from './deps.js'
import { deviceCategory } from './device-category.js'

export function clientInfo(request: FastifyRequest): ClientInfo {
  const header = request.headers['x-device-category']
  const userAgent = request.headers['user-agent']
  return {
    deviceCategory: deviceCategory(typeof header === 'string' ? header : undefined, userAgent),
    userAgent: userAgent ?? null,
    ipAddress: request.ip ?? null,
  }
}
