import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { auditOriginOf } from '../../../lib/audit/origin.js'
import { proveCurrentPassword } from '../../../lib/account-security/password/change-password.js'
import {
  confirmTotpEnrolment,
  disableSmsFactor,
  disableTotp,
  enableSmsFactor,
  regenerateRecoveryCodes,
  startTotpEnrolment,
} from '../../../lib/account-security/second-factor/enrolment.js'
import { factorStatus } from '../../../lib/account-security/second-factor/factors.js'
import type { AuditOrigin } from '../../../lib/audit/record.js'
import type { ErrorCode } from '../../../lib/errors.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { callerScope } from '../../../lib/sign-in/caller-scope.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import {
  FactorStatusSchema,
  PasswordProofSchema,
  RecoveryCodesSchema,
  TotpConfirmationSchema,
  TotpEnrolmentSchema,
} from './mfa.schemas.js'

// The caller's second factors, mounted at /v1/me by its folder. Every change but the confirmation of a TOTP
// enrolment (whose start took the password) proves the current password first (currentPassword below).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // bcrypt runs before the transaction opens, with no pooled connection held, and the check is a login attempt of
  // the user: AUTH_013 when wrong, counted towards the lockout, AUTH_018 while locked. A stolen session alone can
  // therefore neither enable, disable nor read out a factor.
  const currentPassword = routeProof<{ password: string }>('current-password', async (request) => {
    await proveCurrentPassword(app, callerScope(request), request.body.password, auditOriginOf(request, request.caller.userId))
  })
  // A wrong code answers 400, which rolls the request transaction back, yet it must count (a pending secret dies
  // after SVC_OTP_MAX_ATTEMPTS wrong codes): it is checked in a transaction of its own that commits either way. It
  // proves the recovery codes it issued, which the handler answers (shown this once).
  const totpCode = routeProof<{ code: string }, string[]>('totp-code', (request) =>
    confirmTotpEnrolment(app.db, app.mfa, app.env.SVC_OTP_MAX_ATTEMPTS, callerScope(request), request.body.code, auditOriginOf(request, request.caller.userId)),
  )
  // Like a password change, each proof also spends the per-address budget.
  const proven = { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, proof: currentPassword } as const
  const owner = (caller: { tenantId: number; userId: number }) => ({ tenantId: caller.tenantId, userId: caller.userId })

  /** A change that answers 204 once the password is proven. */
  const provenChange = (
    url: string,
    summary: { operationId: string; summary: string; problems?: ErrorCode[] },
    change: (trx: TenantTx, owner: { tenantId: number; userId: number }, origin: AuditOrigin) => Promise<unknown>,
  ) =>
    app.post(
      url,
      {
        config: proven,
        schema: {
          operationId: summary.operationId,
          summary: summary.summary,
          tags: ['mfa'],
          body: PasswordProofSchema,
          response: { 204: Type.Null() },
          problems: ['AUTH_013', 'AUTH_018', ...(summary.problems ?? [])],
        },
      },
      async (request, reply) => {
        await change(request.db, owner(request.caller), auditOriginOf(request))
        return reply.code(204).send(null)
      },
    )

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
      config: { access: 'user', proof: totpCode },
      schema: {
        operationId: 'confirmTotp',
        summary: 'Enable the pending authenticator app with its code; answers the recovery codes',
        tags: ['mfa'],
        body: TotpConfirmationSchema,
        response: { 200: RecoveryCodesSchema },
        problems: ['OTP_INVALID'],
      },
    },
    async (request) => ({ recoveryCodes: request.proven(totpCode) }),
  )

  provenChange('/mfa/totp/disable', { operationId: 'disableTotp', summary: 'Disable the authenticator app (and a pending enrolment)' }, disableTotp)
  provenChange(
    '/mfa/sms',
    { operationId: 'enableSmsFactor', summary: 'Enable codes by SMS to your verified phone', problems: ['PHONE_NOT_VERIFIED'] },
    enableSmsFactor,
  )
  provenChange('/mfa/sms/disable', { operationId: 'disableSmsFactor', summary: 'Disable codes by SMS' }, disableSmsFactor)

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
