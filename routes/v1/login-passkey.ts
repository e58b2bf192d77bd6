import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { AuthenticationResponseJSON } from '@simplewebauthn/server'
import { countedLogin } from '../../lib/observability/metrics.js'
import { signInWithPasskey, startPasskeySignIn } from '../../lib/passkeys/sign-in.js'
import { clientInfo } from '../../lib/sign-in/client-info.js'
import { setAuthCookies } from '../../lib/sign-in/cookies.js'
import { ClientHeadersSchema, LoginResponseSchema } from './auth.schemas.js'
import { NoBodySchema } from './me/phone-verification.schemas.js'
import { PasskeySignInSchema, SignInOptionsSchema } from './passkey.schemas.js'

// Sign-in with a passkey (lib/passkeys/sign-in.ts). Under the skipped prefix /v1/login, like login: no access token
// is read. Both steps spend login's per-address budget. The answer, cookies and session are the password login's.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.passkeysEnabled)

  app.post(
    '/login/passkey/options',
    {
      config: { access: { audience: 'public', addressBudget: 'AUTH_018' } },
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
      },
      schema: {
        operationId: 'startPasskeySignIn',
        summary: 'Start a passkey sign-in: request options for navigator.credentials.get, and their challengeId',
        tags: ['auth'],
        body: NoBodySchema,
        response: { 200: SignInOptionsSchema },
        problems: ['PASSKEYS_DISABLED'],
      },
    },
    async () => startPasskeySignIn(app.authDeps, app.requirePasskeys()),
  )

  app.post(
    '/login/passkey',
    {
      config: { access: { audience: 'public', addressBudget: 'AUTH_018' } },
      schema: {
        operationId: 'signInWithPasskey',
        summary: 'Sign in with a passkey: the assertion for the challengeId; answers as POST /v1/login does',
        description: 'The passkey stands for both factors: no second step follows, whatever factors the user has.',
        tags: ['auth'],
        headers: ClientHeadersSchema,
        body: PasskeySignInSchema,
        response: { 200: LoginResponseSchema },
        problems: ['PASSKEYS_DISABLED', 'AUTH_001', 'AUTH_010'],
        setsCookies: 'tokens',
      },
    },
    async (request, reply) => {
      const input = { challengeId: request.body.challengeId, response: request.body.response as AuthenticationResponseJSON }
      const outcome = await countedLogin(app.metrics, () => signInWithPasskey(app.authDeps, app.requirePasskeys(), input, clientInfo(request)))
      setAuthCookies(reply, app.env, outcome.tokens)
      return { accessExpiresIn: app.env.SVC_ACCESS_TTL, refreshExpiresIn: app.env.SVC_REFRESH_TTL, user: outcome.user }
    },
  )
}

export default routes
