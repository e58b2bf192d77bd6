import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Nullable } from '../../../lib/http/response-types.js'
import { Type } from '@sinclair/typebox'
import { listUserSessions, revokeSessions } from '../../../db/repos/sessions.js'
import { AppError } from '../../../lib/errors.js'

const SessionSchema = Type.Object({
  sid: Type.String({ format: 'uuid' }),
  deviceCategory: Type.String(),
  userAgent: Nullable(Type.String()),
  ipAddress: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  lastRefreshedAt: Nullable(Type.String({ format: 'date-time' })),
  current: Type.Boolean(),
})

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sessions',
    { schema: { tags: ['sessions'], response: { 200: Type.Object({ items: Type.Array(SessionSchema) }) } } },
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
      schema: {
        tags: ['sessions'],
        params: Type.Object({ sid: Type.String({ format: 'uuid' }) }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const identity = request.caller
      const ended = await revokeSessions(request.db, { sid: request.params.sid, userId: identity.userId }, 'REVOKED_BY_USER')
      if (ended.length === 0) throw new AppError('AUTH_014')
      return reply.code(204).send(null)
    },
  )

  app.delete('/sessions', { schema: { tags: ['sessions'], response: { 204: Type.Null() } } }, async (request, reply) => {
    const identity = request.caller
    await revokeSessions(request.db, { userId: identity.userId, exceptSid: identity.sid }, 'REVOKED_BY_USER')
    return reply.code(204).send(null)
  })
}

export default routes
