import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { clientInfo } from '../../lib/auth/client-info.js'
import { setAuthCookies } from '../../lib/auth/cookies.js'
import { registerOwner, registerStudent } from '../../lib/auth/register.js'
import { OwnerRegistrationSchema, RegisteredResponseSchema, StudentRegistrationSchema } from './auth.schemas.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const lifetimes = { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL }

  app.post(
    '/register',
    {
      config: { auth: false, addressRateLimit: 'RATE_LIMITED' },
      schema: { tags: ['auth'], body: StudentRegistrationSchema, response: { 201: RegisteredResponseSchema } },
    },
    async (request, reply) => {
      const { tokens, user } = await registerStudent(app.authDeps, request.body, clientInfo(request))
      setAuthCookies(reply, app.env, tokens)
      return reply.code(201).send({ ...lifetimes, user })
    },
  )

  app.post(
    '/register/owner',
    {
      config: { auth: false, addressRateLimit: 'RATE_LIMITED' },
      schema: { tags: ['auth'], body: OwnerRegistrationSchema, response: { 201: RegisteredResponseSchema } },
    },
    async (request, reply) => {
      const { tokens, user } = await registerOwner(app.authDeps, request.body, clientInfo(request))
      // Committed by now: subscribers only ever see an owner that exists.
      void app.events.publish('OwnerRegisteredEvent', {
        tenantId: user.tenantId,
        tenantSlug: user.tenantSlug,
        ownerUserId: user.id,
        occurredAt: new Date(),
      }, request.log)
      setAuthCookies(reply, app.env, tokens)
      return reply.code(201).send({ ...lifetimes, user })
    },
  )
}

export default routes
