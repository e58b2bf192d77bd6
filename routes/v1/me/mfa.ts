import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { auditOriginOf } from '../../../lib/audit/origin.js'
import {
  disableSmsFactor,
  disableTotp,
  enableSmsFactor,
  regenerateRecoveryCodes,
  startTotpEnrolment,
} from '../../../lib/mfa/enrolment.js'
import { factorStatus } from '../../../lib/mfa/factors.js'
import {
  FactorStatusSchema,
  PasswordProofSchema,
  RecoveryCodesSchema,
  TotpConfirmationSchema,
  TotpEnrolmentSchema,
} from './mfa.schemas.js'

// The caller's second factors, mounted at /v1/me by its folder. Every change but the confirmation of a TOTP
// enrolment (whose start took the password) proves the current password first (plugins/password-proof.ts).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // Like a password change, each proof also spends the per-address budget.
  const proven = { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, passwordProof: true } as const
  const owner = (caller: { tenantId: number; userId: number }) => ({ tenantId: caller.tenantId, userId: caller.userId })
  const noContent = { 204: Type.Null() }

  app.get(
    '/mfa',
    { config: { access: 'user' }, schema: { operationId: 'getMfa', summary: 'Your second factors', tags: ['mfa'], response: { 200: FactorStatusSchema } } },
    async (request) => factorStatus(request.db, owner(request.caller)),
  )

  app.post(
    '/mfa/totp',
    {
      config: proven,
      schema: {
        operationId: 'startTotp',
        summary: 'Start enrolling an authenticator app; pending until confirmed',
        tags: ['mfa'],
        body: PasswordProofSchema,
        response: { 200: TotpEnrolmentSchema },
        problems: ['AUTH_013', 'AUTH_018'],
      },
    },
    async (request) => startTotpEnrolment(request.db, app.mfa, owner(request.caller)),
  )

  app.post(
    '/mfa/totp/confirm',
    {
      // The code is checked before the request transaction opens (plugins/totp-confirmation.ts).
      config: { access: 'user', totpConfirmation: true },
      schema: {
        operationId: 'confirmTotp',
        summary: 'Enable the pending authenticator app with its code; answers the recovery codes',
        tags: ['mfa'],
        body: TotpConfirmationSchema,
        response: { 200: RecoveryCodesSchema },
        problems: ['OTP_INVALID'],
      },
    },
    async (request) => ({ recoveryCodes: request.issuedRecoveryCodes }),
  )

  app.post(
    '/mfa/totp/disable',
    {
      config: proven,
      schema: {
        operationId: 'disableTotp',
        summary: 'Disable the authenticator app (and a pending enrolment)',
        tags: ['mfa'],
        body: PasswordProofSchema,
        response: noContent,
        problems: ['AUTH_013', 'AUTH_018'],
      },
    },
    async (request, reply) => {
      await disableTotp(request.db, owner(request.caller), auditOriginOf(request))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/mfa/sms',
    {
      config: proven,
      schema: {
        operationId: 'enableSmsFactor',
        summary: 'Enable codes by SMS to your verified phone',
        tags: ['mfa'],
        body: PasswordProofSchema,
        response: noContent,
        problems: ['AUTH_013', 'AUTH_018', 'PHONE_NOT_VERIFIED'],
      },
    },
    async (request, reply) => {
      await enableSmsFactor(request.db, owner(request.caller), auditOriginOf(request))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/mfa/sms/disable',
    {
      config: proven,
      schema: {
        operationId: 'disableSmsFactor',
        summary: 'Disable codes by SMS',
        tags: ['mfa'],
        body: PasswordProofSchema,
        response: noContent,
        problems: ['AUTH_013', 'AUTH_018'],
      },
    },
    async (request, reply) => {
      await disableSmsFactor(request.db, owner(request.caller), auditOriginOf(request))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/mfa/recovery-codes',
    {
      config: proven,
      schema: {
        operationId: 'regenerateRecoveryCodes',
        summary: 'A new set of recovery codes; the old set is void',
        tags: ['mfa'],
        body: PasswordProofSchema,
        response: { 200: RecoveryCodesSchema },
        problems: ['AUTH_013', 'AUTH_018', 'MFA_NOT_ENABLED'],
      },
    },
    async (request) => ({
      recoveryCodes: await regenerateRecoveryCodes(request.db, app.mfa, owner(request.caller), auditOriginOf(request)),
    }),
  )
}

export default routes
