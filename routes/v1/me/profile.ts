import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { updateAvatarSeed, updateName } from '../../../db/repos/tenancy/users.js'
import { auditOriginOf } from '../../../lib/audit/origin.js'
import { passwordChanged } from '../../../lib/sign-in/account-events.js'
import { provePasswordChange, storePasswordChange, type ProvenPasswordChange } from '../../../lib/account-security/password/change-password.js'
import { currentUserMissing, currentUserResponse, findCurrentUser, toFullUserResponse } from '../../../lib/sign-in/current-user.js'
import { normalizeOptionalPhone } from '../../../lib/account-security/phone/optional-phone.js'
import { changePhone } from '../../../lib/account-security/phone/phone-change.js'
import { toUserResponse, UserResponseSchema } from '../../../lib/sign-in/user-response.js'
import { generateAvatarSeed } from '../../../lib/tenancy/identifiers.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { callerScope } from '../../../lib/sign-in/caller-scope.js'
import {
  AvatarResponseSchema,
  ChangePasswordSchema,
  UpdateAvatarSchema,
  UpdateProfileSchema,
} from './me.schemas.js'

// Not index.ts: autoload loads only the index file of a folder that has one, which would drop sessions.ts.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // bcrypt (the current password's comparison, the new one's hash) runs before the transaction opens, with no pooled
  // connection held, so a burst of password changes cannot starve every other request of connections; the current
  // password is checked as a login attempt of the user, lockout included. The handler only writes.
  const passwordChange = routeProof<{ currentPassword: string; newPassword: string }, ProvenPasswordChange>('password-change', (request) =>
    provePasswordChange(app, callerScope(request), request.body, auditOriginOf(request, request.caller.userId)),
  )

  const getMe = { operationId: 'getMe', summary: 'The signed-in user', tags: ['me'], response: { 200: UserResponseSchema } }
  app.get('/', { config: { access: 'user' }, schema: getMe }, async (request) => {
    return currentUserResponse(request.db, request.caller.userId)
  })

  app.patch(
    '/',
    {
      config: { access: 'user' },
      schema: {
        operationId: 'updateMe',
        summary: 'Change your name or phone',
        description:
          'A change of phone is audited, and a verified number it replaces is told of it by SMS; when that notice cannot go, the change is refused with it.',
        tags: ['me'],
        body: UpdateProfileSchema,
        response: { 200: UserResponseSchema },
        problems: ['INVALID_PHONE_NUMBER', 'SMS_QUOTA_EXCEEDED', 'SENDER_SETTING_NOT_APPROVED'],
      },
    },
    async (request) => {
      const { name, phone } = request.body
      const { tenantId, userId } = request.caller
      const user = name === undefined ? undefined : await updateName(request.db, userId, name)
      if (phone === undefined) return toFullUserResponse(request.db, user ?? (await findCurrentUser(request.db, userId)))
      // Its notice's quota reservation ends the transaction: it hands back what the answer needs.
      const changed = await changePhone(request.db, app.oneTimeCodes.sms, { tenantId, userId }, normalizeOptionalPhone(phone), auditOriginOf(request))
      request.afterCommit(() => app.dispatcher.kick())
      return toUserResponse(changed.user, changed.tenant)
    },
  )

  app.post(
    '/password',
    {
      // A stolen access token must not turn this into an unlimited password oracle: the login budget applies, and
      // the current password is checked as a login attempt of the user (passwordChange above), lockout included.
      config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' }, proof: passwordChange },
      schema: {
        operationId: 'changePassword',
        summary: 'Change your password; your other sessions end',
        tags: ['me'],
        body: ChangePasswordSchema,
        response: { 204: Type.Null() },
        problems: ['AUTH_012', 'AUTH_013', 'AUTH_018'],
      },
    },
    async (request, reply) => {
      const { userId, sid } = request.caller
      const endedSessions = await storePasswordChange(request.db, { userId, sid }, request.proven(passwordChange))
      await request.audit(passwordChanged(userId, endedSessions))
      return reply.code(204).send(null)
    },
  )

  app.patch(
    '/avatar',
    {
      config: { access: 'user' },
      // "Give me a new avatar" needs no body at all: a missing one reads as `{}` instead of failing the schema. The
      // JSON body `null` is a body, and not an object, so the schema refuses it like `[]` or `"seed"`.
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
      },
      schema: {
        operationId: 'updateAvatar',
        summary: 'Set your avatar seed, or draw a new one',
        tags: ['me'],
        body: UpdateAvatarSchema,
        response: { 200: AvatarResponseSchema },
      },
    },
    async (request) => {
      const avatarSeed = request.body.avatarSeed ?? generateAvatarSeed()
      const user = await updateAvatarSeed(request.db, request.caller.userId, avatarSeed)
      if (!user) throw currentUserMissing()
      return { avatarSeed: user.avatarSeed }
    },
  )
}

export default routes
