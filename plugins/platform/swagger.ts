import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fp from 'fastify-plugin'
import type { ErrorCode, OtherStatus } from '../../lib/errors.js'
import { PROBLEM_SCHEMA_ID, ProblemSchema } from '../../lib/http/problem-schema.js'
import { documentRoute } from '../../lib/openapi/document-route.js'
import { finishDocument } from '../../lib/openapi/finish-document.js'
import type { CookieEffect } from '../../lib/openapi/response-headers.js'

declare module 'fastify' {
  interface FastifySchema {
    /**
     * OpenAPI only: the catalog codes the handler answers, itself or through lib/. Refusals of plugins (access,
     * idempotency, CSRF, body checks) are derived from the route's config and need no entry.
     */
    problems?: readonly ErrorCode[]
    /** OpenAPI only: the codes this route answers with another status than the catalog's (lib/errors.ts OTHER_STATUSES). */
    problemStatuses?: { [C in ErrorCode]?: OtherStatus<C> }
    /** OpenAPI only: what the answer does with the cookies (lib/openapi/response-headers.ts). */
    setsCookies?: CookieEffect
  }
}

/** Where the interactive documentation and the raw document are served; neither appears in the document. */
export const DOCS_PREFIX = '/docs'
export const OPENAPI_PATH = '/openapi.json'

export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'svc: multi-tenant authentication and SMS',
          version: 'v1',
          description:
            'Academies (tenants) register an owner; staff sign in, manage sessions and profiles, and send SMS to ' +
            'guardians. Every error body is `application/problem+json` with a stable `code`; each operation lists ' +
            'the codes it can answer, per status.',
          // No public licence (the package is private); an SPDX reference for a proprietary one, as tools expect.
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: '/', description: 'this service' }],
        tags: [
          { name: 'auth', description: 'Registration, login, token refresh and logout' },
          { name: 'me', description: "The signed-in user's profile, password and avatar" },
          { name: 'mfa', description: "The signed-in user's second factors: authenticator app, SMS codes, recovery codes" },
          { name: 'passkeys', description: "The signed-in user's passkeys (WebAuthn): adding, listing, renaming, removing; sign-in with one is under auth" },
          { name: 'sessions', description: "The signed-in user's sessions (devices)" },
          { name: 'sms', description: 'Sends, history, recipient groups and the sender number' },
          { name: 'sms-templates', description: 'Reusable message templates' },
          { name: 'kakao', description: "KakaoTalk notices (AlimTalk): the academy's Kakao channel and the templates imported from the provider" },
          { name: 'audit', description: "The academy's audit log: who did what, and when" },
          { name: 'api-keys', description: "Integrator API keys: the academy's own servers send and read without a staff password" },
          { name: 'events', description: "Delivery events pushed to the academy's own endpoint, signed (Standard Webhooks)" },
          { name: 'internal', description: 'Signed operations calls (HMAC headers), not for end users' },
          { name: 'provider-callback', description: 'Delivery reports from the SMS provider' },
          { name: 'operations', description: 'Health' },
        ],
        components: {
          // Problem is referenced from every error response; @fastify/swagger names the other schemas itself, after
          // their `$id`, wherever a route uses them (refResolver below).
          schemas: { [PROBLEM_SCHEMA_ID]: ProblemSchema },
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'Access token from login or refresh, as `Authorization: Bearer <token>`',
            },
            cookieAuth: {
              type: 'apiKey',
              in: 'cookie',
              name: 'svc_access_token',
              description: 'The same access token in the cookie that login and refresh set',
            },
            refreshCookie: {
              type: 'apiKey',
              in: 'cookie',
              name: 'svc_refresh_token',
              description: 'The refresh token in the cookie that login and refresh set (POST /v1/refresh only)',
            },
            mfaCookie: {
              type: 'apiKey',
              in: 'cookie',
              name: 'svc_mfa_token',
              description: "The second-step token a login's password step sets for a user with a second factor (Path=/v1/login)",
            },
            internalTenantSlug: { type: 'apiKey', in: 'header', name: 'X-Tenant-Slug', description: 'Tenant the call acts for' },
            internalTimestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp', description: 'Epoch seconds' },
            internalSignature: { type: 'apiKey', in: 'header', name: 'X-Signature', description: 'HMAC-SHA256, lowercase hex' },
            providerSecret: { type: 'apiKey', in: 'header', name: 'X-Provider-Secret', description: 'SHA-1 of the webhook token, lowercase hex' },
            integratorKey: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'svck_...',
              description:
                "An academy's integrator API key (POST /v1/api-keys), as `Authorization: Bearer svck_...`: accepted only on the " +
                'operations that list it, within the scope each names (x-api-key-scope)',
            },
          },
        },
        // Either credential is accepted; routes open to anyone override this with `security: []`.
        security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      },
      refResolver: { buildLocalReference: (schema, _base, _fragment, index) => String(schema.$id ?? `def-${index}`) },
      transform: documentRoute,
      transformObject: (document) => finishDocument('openapiObject' in document ? document.openapiObject : document.swaggerObject),
    })

    // The documentation routes are public: in their own context, every route they add (the UI's among them, which
    // take no options from us) is given `access: 'public'` and hidden from the document.
    await app.register(async (docs) => {
      docs.addHook('onRoute', (route) => {
        route.config = { ...route.config, access: 'public' }
        route.schema = { ...route.schema, hide: true }
      })
      // The explorer loads the document from its public address rather than the UI's own copy under /docs/json.
      await docs.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { urls: [{ url: OPENAPI_PATH, name: OPENAPI_PATH }] } })
      docs.get(OPENAPI_PATH, async () => docs.swagger())
    })
  },
  { name: 'swagger', dependencies: ['access'] },
)
