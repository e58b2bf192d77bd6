import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { auditOriginOf } from '../../lib/audit/origin.js'
import { resetPasswordWithCode, type RecoveryDeps } from '../../lib/account-security/recovery/password-recovery.js'
import { ForgotPasswordSchema, PasswordResetRequestedSchema, ResetPasswordSchema } from './password.schemas.js'

// Public, under a skipped prefix (lib/sign-in/skip-paths.ts): a stale token never stops a recovery. Both routes spend
// the per-address budget of login, which is what limits guessing from one address.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const recovery: RecoveryDeps = { db: app.db, env: app.env, issuing: app.oneTimeCodes, secondFactor: app.secondFactors }

  app.post(
    '/password/forgot',
    {
      config: { access: { audience: 'public', addressBudget: 'RATE_LIMITED' } },
      schema: {
        operationId: 'forgotPassword',
        summary: 'Ask for a password reset code by SMS to the verified phone',
        tags: ['auth'],
        body: ForgotPasswordSchema,
        response: { 202: PasswordResetRequestedSchema },
      },
    },
    async (request, reply) => {
      // Answered before anything is looked up: the same answer, in the same time, whatever the account
      // (lib/account-security/recovery/recovery-requests.ts).
      app.passwordRecovery.accept(request.body, request.log)
      return reply.code(202).send({ expiresIn: app.env.SVC_OTP_TTL_SECONDS })
    },
  )

  app.post(
    '/password/reset',
    {
      config: { access: { audience: 'public', addressBudget: 'RATE_LIMITED' } },
      schema: {
        operationId: 'resetPassword',
        summary: 'Set a new password with the code; every session ends',
        tags: ['auth'],
        body: ResetPasswordSchema,
        response: { 204: Type.Null() },
        problems: ['AUTH_012', 'OTP_INVALID', 'MFA_REQUIRED'],
      },
    },
    async (request, reply) => {
      await resetPasswordWithCode(recovery, request.body, auditOriginOf(request, null))
      return reply.code(204).send(null)
    },
  )
}

export default routes
