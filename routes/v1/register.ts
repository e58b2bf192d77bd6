import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { clientInfo } from '../../lib/sign-in/client-info.js'
import { setAuthCookies } from '../../lib/sign-in/cookies.js'
import { registerOwner, registerStudent } from '../../lib/tenancy/register.js'
import { ClientHeadersSchema, OwnerRegistrationSchema, RegisteredResponseSchema, StudentRegistrationSchema } from './auth.schemas.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const lifetimes = { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL }

  app.post(
    '/register',
    {
      config: { access: { audience: 'public', addressBudget: 'RATE_LIMITED' } },
      schema: {
        operationId: 'registerStudent',
        summary: 'Join an active academy as a student',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: StudentRegistrationSchema,
        response: { 201: RegisteredResponseSchema },
        problems: ['AUTH_009', 'AUTH_010', 'AUTH_011', 'AUTH_012', 'INVALID_PHONE_NUMBER'],
        setsCookies: 'tokens',
      },
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
      config: { access: { audience: 'public', addressBudget: 'RATE_LIMITED' } },
      schema: {
        operationId: 'registerOwner',
        summary: 'Register an academy and its owner',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: OwnerRegistrationSchema,
        response: { 201: RegisteredResponseSchema },
        problems: ['AUTH_011', 'AUTH_012', 'AUTH_019'],
        setsCookies: 'tokens',
      },
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
