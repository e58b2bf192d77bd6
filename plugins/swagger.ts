import swagger, { type SwaggerTransform } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import { STATUS_CODES } from 'node:http'
import { ProblemSchema } from '../lib/http/problem-schema.js'

/** Where the interactive documentation and the raw document are served; neither appears in the document. */
export const DOCS_PREFIX = '/docs'
export const OPENAPI_PATH = '/openapi.json'

const INTERNAL_PREFIX = '/internal/'
const PROVIDER_CALLBACK_PATH = '/v1/sms/solapi/webhook'
const PROBLEM_MEDIA_TYPE = 'application/problem+json'

const INTERNAL_NOTE =
  'Signed operations call, not for end users. Headers: X-Tenant-Slug, X-Timestamp (epoch seconds, within 300 s) and ' +
  'X-Signature, the lowercase hex HMAC-SHA256 with SVC_INTERNAL_HMAC_SECRET over ' +
  '`X-Timestamp \\n METHOD \\n path-and-query \\n X-Tenant-Slug \\n hex(SHA-256(raw body))`. ' +
  'scripts/approve-sender.sh signs and sends it.'
const PROVIDER_CALLBACK_NOTE =
  "The SMS provider's delivery reports. Authenticated by X-Provider-Secret, the lowercase hex SHA-1 of the " +
  'configured webhook token; end-user tokens are not used.'

// Header-based schemes for the two non-user callers, so their operations can state what they need instead of
// claiming to be public.
const INTERNAL_SECURITY = [{ internalTenantSlug: [], internalTimestamp: [], internalSignature: [] }]
const PROVIDER_SECURITY = [{ providerSecret: [] }]

const problemResponse = (description: string) => ({
  description,
  content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemSchema } },
})

function isProblemSchema(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties
  return Boolean(properties && ['type', 'title', 'status', 'code'].every((key) => key in properties))
}

/**
 * Every declared 4xx/5xx Problem body is documented under its real media type, and a route that does not declare
 * the ranges gets them: any route can answer VALIDATION_FAILED, NOT_FOUND, RATE_LIMITED or INTERNAL_ERROR.
 * Success bodies and non-problem errors (the health check's 503 DOWN) stay as declared.
 */
function documentResponses(response: unknown): Record<string, unknown> {
  const declared = (response ?? {}) as Record<string, unknown>
  const documented: Record<string, unknown> = {}
  for (const [status, schema] of Object.entries(declared)) {
    const isError = /^[45]/.test(status)
    documented[status] = isError && isProblemSchema(schema) ? problemResponse(`${STATUS_CODES[status] ?? status}: Problem Details (RFC 9457)`) : schema
  }
  const has = (range: string) => Object.keys(documented).some((status) => status.toUpperCase() === range)
  // Without this, a route that declares no response at all would be documented as only ever failing.
  if (!Object.keys(documented).some((status) => /^[123]|^default$/.test(status))) {
    documented.default = { description: 'Success; this route declares no response schema' }
  }
  if (!has('4XX')) documented['4XX'] = problemResponse('Client error: Problem Details (RFC 9457), `code` from the error catalog')
  if (!has('5XX')) documented['5XX'] = problemResponse('Server error: Problem Details (RFC 9457); details are only logged')
  return documented
}

/**
 * Documentation only (the route's validation and serialisation are untouched): security from the route's own flags,
 * the two non-user families tagged and described, and problem responses everywhere.
 */
export const documentRoute: SwaggerTransform = ({ schema, url, route }) => {
  const declared = (schema ?? {}) as FastifySchema & { security?: unknown; description?: string; tags?: string[] }
  const documented: Record<string, unknown> = { ...declared, response: documentResponses(declared.response) }
  const withNote = (note: string) => (declared.description ? `${declared.description}\n\n${note}` : note)
  const publicRoute = (route.config as { auth?: unknown } | undefined)?.auth === false

  if (url.startsWith(INTERNAL_PREFIX)) {
    Object.assign(documented, { tags: ['internal'], description: withNote(INTERNAL_NOTE), security: INTERNAL_SECURITY })
  } else if (url === PROVIDER_CALLBACK_PATH) {
    Object.assign(documented, {
      tags: ['provider-callback'],
      description: withNote(PROVIDER_CALLBACK_NOTE),
      security: PROVIDER_SECURITY,
    })
  } else if (declared.security === undefined && publicRoute) {
    documented.security = []
  }
  // A prefix's '/' route answers with and without the slash, and Fastify leaves the options it shares with the
  // slash variant holding that URL; the contract spells these paths without it (`/v1/me`).
  const path = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url
  return { schema: documented as FastifySchema, url: path }
}

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
            'guardians. Every error body is `application/problem+json` with a stable `code`.',
        },
        servers: [{ url: '/', description: 'this service' }],
        tags: [
          { name: 'auth', description: 'Registration, login, token refresh and logout' },
          { name: 'me', description: "The signed-in user's profile, password and avatar" },
          { name: 'sessions', description: "The signed-in user's sessions (devices)" },
          { name: 'sms', description: 'Sends, history, recipient groups and the sender number' },
          { name: 'sms-templates', description: 'Reusable message templates' },
          { name: 'internal', description: 'Signed operations calls (HMAC headers), not for end users' },
          { name: 'provider-callback', description: 'Delivery reports from the SMS provider' },
          { name: 'operations', description: 'Health' },
        ],
        components: {
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
            internalTenantSlug: { type: 'apiKey', in: 'header', name: 'X-Tenant-Slug', description: 'Tenant the call acts for' },
            internalTimestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp', description: 'Epoch seconds' },
            internalSignature: { type: 'apiKey', in: 'header', name: 'X-Signature', description: 'HMAC-SHA256, lowercase hex' },
            providerSecret: { type: 'apiKey', in: 'header', name: 'X-Provider-Secret', description: 'SHA-1 of the webhook token, lowercase hex' },
          },
        },
        // Either credential is accepted; routes open to anyone override this with `security: []`.
        security: [{ bearerAuth: [] }, { cookieAuth: [] }],
      },
      transform: documentRoute,
    })

    // The documentation routes are public: in their own context, every route they add is marked `auth: false`
    // through its config (never by matching URLs in the auth hook) and hidden from the document. This hook runs
    // after the root's onRoute hooks, which may already have asked for a tenant transaction, so that is undone.
    await app.register(async (docs) => {
      docs.addHook('onRoute', (route) => {
        route.config = { ...route.config, auth: false, tenant: false }
        route.schema = { ...route.schema, hide: true }
      })
      await docs.register(swaggerUi, { routePrefix: DOCS_PREFIX })
      docs.get(OPENAPI_PATH, async () => docs.swagger())
    })
  },
  { name: 'swagger' },
)
