import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Nullable, StringEnum } from '../../../lib/http/response-types.js'
import { Type } from '@sinclair/typebox'
import { listUserSessions, revokeSessions } from '../../../db/repos/sign-in/sessions.js'
import { AppError } from '../../../lib/errors.js'
import { DEVICE_CATEGORIES } from '../../../lib/sign-in/device-category.js'
import { sessionsRevoked } from '../../../lib/sign-in/account-events.js'

const exampleSession = {
  sid: '6f1c2a9e-3b7d-4e15-8c0a-92d4b5e7f013',
  deviceCategory: 'WEB',
  userAgent: 'curl/8.5.0',
  ipAddress: '127.0.0.1',
  createdAt: '2026-11-23T09:00:00.000Z',
  lastRefreshedAt: null,
  current: true,
}

const SessionSchema = Type.Object({
  sid: Type.String({ format: 'uuid' }),
  deviceCategory: StringEnum(DEVICE_CATEGORIES, { $id: 'DeviceCategory' }),
  userAgent: Nullable(Type.String()),
  ipAddress: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  lastRefreshedAt: Nullable(Type.String({ format: 'date-time' })),
  current: Type.Boolean(),
}, { $id: 'Session', examples: [exampleSession] })

const SessionListSchema = Type.Object({ items: Type.Array(SessionSchema) }, { $id: 'SessionList' })

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sessions',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'listSessions',
        summary: 'Your sessions, newest first',
        tags: ['sessions'],
        response: { 200: SessionListSchema },
      },
    },
    async (request) => {
      const identity = request.caller
      const sessions = await listUserSessions(request.db, identity.userId)
      return {
        items: sessions.map((session) => ({
          sid: session.sid,
          deviceCategory: session.deviceCategory,
          userAgent: session.userAgent,
          ipAddress: session.ipAddress,
          createdAt: session.createdAt.toISOString(),
          lastRefreshedAt: session.lastRefreshedAt?.toISOString() ?? null,
          current: session.sid === identity.sid,
        })),
      }
    },
  )

  app.delete(
    '/sessions/:sid',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'revokeSession',
        summary: 'End one of your sessions',
        tags: ['sessions'],
        params: Type.Object({ sid: Type.String({ format: 'uuid' }) }),
        problems: ['AUTH_014'],
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const identity = request.caller
      const ended = await revokeSessions(request.db, { sid: request.params.sid, userId: identity.userId }, 'REVOKED_BY_USER')
      if (ended.length === 0) throw new AppError('AUTH_014')
      for (const event of sessionsRevoked(ended, 'REVOKED_BY_USER')) await request.audit(event)
      return reply.code(204).send(null)
    },
  )

  const revokeOthers = {
    operationId: 'revokeOtherSessions',
    summary: 'End every session but this one',
    tags: ['sessions'],
    response: { 204: Type.Null() },
  }
  app.delete('/sessions', { config: { access: 'user' }, schema: revokeOthers }, async (request, reply) => {
    const identity = request.caller
    const ended = await revokeSessions(request.db, { userId: identity.userId, exceptSid: identity.sid }, 'REVOKED_BY_USER')
    for (const event of sessionsRevoked(ended, 'REVOKED_BY_USER')) await request.audit(event)
    return reply.code(204).send(null)
  })
}

export default routes
