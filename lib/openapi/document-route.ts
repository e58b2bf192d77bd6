import type { SwaggerTransform } from '@fastify/swagger'
import type { FastifySchema } from 'fastify'
import { STATUS_CODES } from 'node:http'
import { policyOf, type AccessPolicy, type Credential } from '../http/access.js'
import { PROBLEM_SCHEMA_ID } from '../http/problem-schema.js'
import { problemCodesOf, problemStatusOf } from './problem-codes.js'
import { PROBLEM_MEDIA_TYPE, problemResponses } from './problem-responses.js'
import { documentedHeaders, documentedParams, documentedQuery } from './request-inputs.js'
import { sharedHeader, tokenCookiesHeader } from './response-headers.js'

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

type Schema = Record<string, unknown>

const isProblemSchema = (schema: unknown) => (schema as Schema | null)?.$id === PROBLEM_SCHEMA_ID

/**
 * A success body is handed to @fastify/swagger as the only member of an `allOf`: nested, a schema with an `$id`
 * becomes a reference to the component of that name (finish-document.ts drops the wrapper again).
 */
function successResponse(status: string, schema: Schema, headers: Schema): Schema {
  const description = STATUS_CODES[status] ?? 'Success'
  if (schema.type === 'null') return { type: 'null', description, headers }
  return { allOf: [schema], 'x-response-description': description, headers }
}

/**
 * A status at which the route declares a body of its own (the health check's 503 DOWN) and a problem can also be
 * answered (closing): both media types.
 */
function withDeclaredBody(status: string, schema: Schema, problem: Schema | undefined): Schema {
  if (!problem) return successResponse(status, schema, sharedHeader('X-Request-Id'))
  // Inside `content` @fastify/swagger names nothing: a named body is referenced, and its component comes from the
  // route's success response.
  const body = schema.$id ? { $ref: `#/components/schemas/${String(schema.$id)}` } : schema
  const content = { 'application/json': { schema: body }, ...(problem.content as Schema) }
  // Retry-After comes with the problem only (closing), not with the route's own body.
  const description = `${STATUS_CODES[status]}: ${String(schema.$id ?? 'the body')} as JSON, or a problem (with Retry-After)`
  return { ...problem, description, headers: sharedHeader('X-Request-Id'), content }
}

function documentResponses(route: Parameters<SwaggerTransform>[0]['route'], declared: FastifySchema): Schema {
  const config = route.config ?? {}
  const successHeaders = {
    ...sharedHeader('X-Request-Id'),
    ...(declared.setsCookies ? tokenCookiesHeader(declared.setsCookies) : {}),
    ...(config.idempotency ? sharedHeader('Idempotent-Replayed') : {}),
  }
  const responses: Schema = {}
  const codes = problemCodesOf({ method: route.method, url: route.url, config, schema: declared })
  const problems = problemResponses(codes, (code) => problemStatusOf({ schema: declared }, code)) as Record<string, Schema>
  for (const [status, schema] of Object.entries((declared.response ?? {}) as Record<string, Schema>)) {
    // Declared Problem bodies only pick serialisers; which problems a route answers is derived (problem-codes.ts).
    if (isProblemSchema(schema)) continue
    responses[status] = /^[45]/.test(status) ? withDeclaredBody(status, schema, problems[status]) : successResponse(status, schema, successHeaders)
  }
  // Without this, a route that declares no response at all would be documented as only ever failing.
  if (Object.keys(responses).length === 0) responses.default = { description: 'Success; this route declares no response schema' }
  for (const [status, problem] of Object.entries(problems)) responses[status] ??= problem
  return responses
}

function rolesNote(policy: AccessPolicy): string | undefined {
  return policy.roles ? `Roles: ${policy.roles.join(', ')}.` : undefined
}

/**
 * The document's view of one route (validation and serialisation are untouched): operation metadata as the route
 * declares it, inputs as a client sends them, every problem the route can answer per status, response headers,
 * security from the route's access, and the two non-user families tagged and described.
 */
// The routes that a cookie of their own authenticates (the handler checks it): a generated client learns to send it.
const COOKIE_SECURITY: Partial<Record<Credential, Schema[]>> = {
  'refresh-cookie': [{ refreshCookie: [] }],
  'mfa-token': [{ mfaCookie: [] }],
}

export const documentRoute: SwaggerTransform = ({ schema, url, route }) => {
  const declared = (schema ?? {}) as FastifySchema
  const { problems: _problems, problemStatuses: _statuses, setsCookies: _cookies, ...operation } = declared
  const policy = policyOf(route.config ?? {})
  const documented: Schema = { ...operation, response: documentResponses(route, declared) }
  if (declared.params) documented.params = documentedParams(declared.params)
  if (declared.querystring) documented.querystring = documentedQuery(declared.querystring)
  if (declared.headers) documented.headers = documentedHeaders(declared.headers)

  const notes = [declared.description, rolesNote(policy)]
  const withNote = (note: string) => [...notes, note].filter(Boolean).join('\n\n')
  if (policy.credential === 'internal-signature') {
    Object.assign(documented, { tags: ['internal'], description: withNote(INTERNAL_NOTE), security: INTERNAL_SECURITY })
  } else if (policy.credential === 'provider-secret') {
    Object.assign(documented, { tags: ['provider-callback'], description: withNote(PROVIDER_CALLBACK_NOTE), security: PROVIDER_SECURITY })
  } else {
    if (notes.some(Boolean)) documented.description = notes.filter(Boolean).join('\n\n')
    // Only the access token is the document's global security; every other route states its own.
    if (declared.security === undefined && policy.credential !== 'access-token') {
      documented.security = COOKIE_SECURITY[policy.credential] ?? []
    }
    // A route that admits API keys says so, and with which scope (lib/http/access.ts).
    if (policy.apiKeyScope) {
      documented.security = [{ bearerAuth: [] }, { cookieAuth: [] }, { integratorKey: [] }]
      documented['x-api-key-scope'] = policy.apiKeyScope
      documented.description = withNote(`API keys: with the scope \`${policy.apiKeyScope}\`.`)
    }
  }
  // A prefix's '/' route answers with and without the slash, and Fastify leaves the options it shares with the
  // slash variant holding that URL; the contract spells these paths without it (`/v1/me`).
  const path = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url
  return { schema: documented as FastifySchema, url: path }
}
