import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { revokeAccessToken } from '../../db/repos/revoked-tokens.js'
import { revokeSessions } from '../../db/repos/sessions.js'
import { clearAuthCookies } from '../../lib/auth/cookies.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const noContent = { 204: Type.Null() }
  const signOut = { tags: ['auth'], response: noContent, setsCookies: 'cleared' } as const
  const logout = { ...signOut, operationId: 'logout', summary: 'Sign out this session' }
  const logoutAll = { ...signOut, operationId: 'logoutAll', summary: 'Sign out every session of this user' }

  app.post('/logout', { schema: logout }, async (request, reply) => {
    const identity = request.caller
    await revokeSessions(request.db, { sid: identity.sid }, 'LOGOUT')
    // The presented token may predate the session's latest rotation; it stops working too.
    await revokeAccessToken(request.db, identity.jti, identity.accessExpiresAt)
    clearAuthCookies(reply, app.env)
    return reply.code(204).send(null)
  })

  app.post('/logout-all', { schema: logoutAll }, async (request, reply) => {
    const identity = request.caller
    await revokeSessions(request.db, { userId: identity.userId }, 'LOGOUT_ALL')
    await revokeAccessToken(request.db, identity.jti, identity.accessExpiresAt)
    clearAuthCookies(reply, app.env)
    return reply.code(204).send(null)
  })
}

export default routes
