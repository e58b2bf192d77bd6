import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { RegistrationResponseJSON } from '@simplewebauthn/server'
import { auditOriginOf } from '../../../lib/audit/origin.js'
import { proveCurrentPassword } from '../../../lib/account-security/password/change-password.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { listPasskeys } from '../../../db/repos/passkeys/passkeys.js'
import { addPasskey, removeOwnPasskey, renameOwnPasskey, startEnrolment, verifyEnrolment } from '../../../lib/passkeys/enrolment.js'
import type { VerifiedCreation } from '../../../lib/passkeys/ceremony.js'
import { callerScope } from '../../../lib/sign-in/caller-scope.js'
import type { PasskeySummary } from '../../../db/repos/passkeys/passkeys.js'
import {
  CreationOptionsSchema,
  PasskeyEnrolmentSchema,
  PasskeyIdParamsSchema,
  PasskeyListSchema,
  PasskeyRenameSchema,
  PasskeySchema,
} from '../passkey.schemas.js'
import { PasswordProofSchema } from './mfa.schemas.js'
import { NoBodySchema } from './phone-verification.schemas.js'

// The caller's passkeys (lib/passkeys/enrolment.ts), mounted at /v1/me by its folder. Cookie-authenticated changes,
// so a request from another site's page is refused (plugins/platform/csrf.ts). Adding and removing one prove the
// current password first, as every change of a sign-in factor does: a stolen session alone can neither plant a
// passkey of the thief's nor remove the owner's.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.passkeysEnabled)

  const passwordOf = (request: FastifyRequest<{ Body: { password: string } }>) =>
    proveCurrentPassword(app, callerScope(request), request.body.password, auditOriginOf(request, request.caller.userId))
  // bcrypt first, with no pooled connection held (a wrong password is a counted login failure, AUTH_013), then the
  // response against the caller's own challenge, used up in a transaction of its own: it stays used even when the
  // request then fails.
  const enrolment = routeProof<{ password: string; response: unknown }, VerifiedCreation>('passkey-enrolment', async (request) => {
    await passwordOf(request)
    return verifyEnrolment(app.db, app.requirePasskeys(), callerScope(request), request.body.response as RegistrationResponseJSON)
  })
  const currentPassword = routeProof<{ password: string }>('current-password', async (request) => {
    await passwordOf(request)
  })
  const owner = (caller: { tenantId: number; userId: number }) => ({ tenantId: caller.tenantId, userId: caller.userId })
  const shown = (passkey: PasskeySummary) => ({
    id: passkey.id,
    name: passkey.name,
    createdAt: passkey.createdAt.toISOString(),
    lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
  })

  app.post(
    '/passkeys/options',
    {
      config: { access: 'user' },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
      },
      schema: {
        operationId: 'startPasskeyEnrolment',
        summary: 'Start adding a passkey: creation options for navigator.credentials.create',
        tags: ['passkeys'],
        body: NoBodySchema,
        response: { 200: CreationOptionsSchema },
        problems: ['PASSKEYS_DISABLED', 'PASSKEY_LIMIT'],
      },
    },
    async (request) => startEnrolment(request.db, app.requirePasskeys(), owner(request.caller)),
  )

  app.post(
    '/passkeys',
    {
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, proof: enrolment },
      schema: {
        operationId: 'addPasskey',
        summary: 'Add a passkey: the registration response, with your password',
        tags: ['passkeys'],
        body: PasskeyEnrolmentSchema,
        response: { 201: PasskeySchema },
        problems: ['PASSKEYS_DISABLED', 'AUTH_013', 'AUTH_018', 'PASSKEY_INVALID', 'PASSKEY_LIMIT'],
      },
    },
    async (request, reply) => {
      const credential = request.proven(enrolment)
      const added = await addPasskey(request.db, app.requirePasskeys(), owner(request.caller), credential, request.body.name, auditOriginOf(request))
      return reply.code(201).send(shown(added))
    },
  )

  app.get(
    '/passkeys',
    {
      config: { access: 'user' },
      schema: { operationId: 'listPasskeys', summary: 'Your passkeys, newest first', tags: ['passkeys'], response: { 200: PasskeyListSchema }, problems: ['PASSKEYS_DISABLED'] },
    },
    async (request) => ({ items: (await listPasskeys(request.db, owner(request.caller))).map(shown) }),
  )

  app.patch(
    '/passkeys/:id',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'renamePasskey',
        summary: 'Rename one of your passkeys',
        tags: ['passkeys'],
        params: PasskeyIdParamsSchema,
        body: PasskeyRenameSchema,
        response: { 200: PasskeySchema },
        problems: ['PASSKEYS_DISABLED', 'PASSKEY_NOT_FOUND'],
      },
    },
    async (request) => shown(await renameOwnPasskey(request.db, owner(request.caller), request.params.id, request.body.name)),
  )

  app.delete(
    '/passkeys/:id',
    {
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, proof: currentPassword },
      schema: {
        operationId: 'removePasskey',
        summary: 'Remove one of your passkeys, with your password',
        tags: ['passkeys'],
        params: PasskeyIdParamsSchema,
        body: PasswordProofSchema,
        response: { 204: Type.Null() },
        problems: ['PASSKEYS_DISABLED', 'AUTH_013', 'AUTH_018', 'PASSKEY_NOT_FOUND'],
      },
    },
    async (request, reply) => {
      await removeOwnPasskey(request.db, owner(request.caller), request.params.id, auditOriginOf(request))
      return reply.code(204).send(null)
    },
  )
}

export default routes
