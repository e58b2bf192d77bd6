import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { revokeAccessToken } from '../../db/repos/sign-in/revoked-tokens.js'
import { revokeSessions, type SessionSelector } from '../../db/repos/sign-in/sessions.js'
import type { RevocationReason } from '../../db/schema.js'
import { sessionsRevoked } from '../../lib/sign-in/account-events.js'
import { clearAuthCookies } from '../../lib/sign-in/cookies.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const noContent = { 204: Type.Null() }
  const signOut = { tags: ['auth'], response: noContent, setsCookies: 'cleared' } as const
  const logout = { ...signOut, operationId: 'logout', summary: 'Sign out this session' }
  const logoutAll = { ...signOut, operationId: 'logoutAll', summary: 'Sign out every session of this user' }

  // Both routes end the chosen sessions (one SESSION_REVOKED each), then the presented token, then the cookies.
  async function endSessions(
    request: FastifyRequest,
    reply: FastifyReply,
    sessions: SessionSelector,
    reason: RevocationReason,
  ) {
    const identity = request.caller
    const ended = await revokeSessions(request.db, sessions, reason)
    for (const event of sessionsRevoked(ended, reason)) await request.audit(event)
    // The presented token may predate the session's latest rotation; it stops working too.
    await revokeAccessToken(request.db, identity.jti, identity.accessExpiresAt)
    clearAuthCookies(reply, app.env)
    return reply.code(204).send(null)
  }

  app.post('/logout', { config: { access: 'user' }, schema: logout }, async (request, reply) =>
    endSessions(request, reply, { sid: request.caller.sid }, 'LOGOUT'),
  )

  app.post('/logout-all', { config: { access: 'user' }, schema: logoutAll }, async (request, reply) =>
    endSessions(request, reply, { userId: request.caller.userId }, 'LOGOUT_ALL'),
  )
}

export default routes
