import { Validator } from '@seriousme/openapi-schema-validator'
import { Type } from '@sinclair/typebox'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { RouteOptions } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { policyOf, type Credential } from '../../../lib/http/access.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { documentRoute } from '../../../lib/openapi/document-route.js'
import { DOCS_PREFIX, OPENAPI_PATH } from '../../../plugins/platform/swagger.js'
import { METRICS_PATH } from '../../../plugins/platform/metrics.js'
import { useTestApp } from '../../support/helper.js'

interface Operation {
  tags?: string[]
  description?: string
  security?: Array<Record<string, string[]>>
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>
}
interface OpenApiDocument {
  openapi: string
  security?: Array<Record<string, string[]>>
  components: { securitySchemes: Record<string, Record<string, string>>; schemas?: Record<string, unknown> }
  paths: Record<string, Record<string, Operation>>
}

/** Fastify's `/users/:id` and `/files/*` as OpenAPI paths, written as the document writes them (no trailing slash). */
const openApiPath = (url: string) =>
  url
    .replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    .replace(/\*/g, '{*}')
    .replace(/(.)\/$/, '$1')

// The metrics endpoint is operations plumbing, deliberately left out of the document.
const isDocsRoute = (url: string) =>
  url === OPENAPI_PATH || url === METRICS_PATH || url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`)

interface RegisteredRoute {
  method: string
  url: string
  /** The route reads no access token (its access names another credential, or none). */
  publicRoute: boolean
  credential: Credential
  /** An integrator's API key may call it too. */
  admitsKeys: boolean
}

describe('GET /openapi.json', () => {
  let document: OpenApiDocument
  const registered: RegisteredRoute[] = []

  beforeAll(async () => {
    // The hook goes on before the app, so it sees every route the app registers, whatever lands later.
  })
  const app = useTestApp(() => ({ extend: async () => undefined, before: (fastify) => {
      fastify.addHook('onRoute', (route: RouteOptions) => {
        const { credential, apiKeyScope } = policyOf(route.config ?? {})
        const publicRoute = credential !== 'access-token'
        const admitsKeys = apiKeyScope !== null
        for (const method of [route.method].flat()) registered.push({ method, url: route.url, publicRoute, credential, admitsKeys })
      })
    } }))
  beforeAll(async () => {
    const response = await app.current.inject({ method: 'GET', url: OPENAPI_PATH })
    expect(response.statusCode).toBe(200)
    document = response.json()
  })

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
    )

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(document) as unknown as Record<string, unknown>)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(document.openapi).toBe('3.1.0')
  })

  it('holds only schemas that compile under strict JSON Schema 2020-12', () => {
    // The OpenAPI meta-schema accepts any object as a Schema Object; compiling each one catches the rest.
    const ajv = addFormats.default(new Ajv2020.default({ strict: true, validateFormats: true }))
    // OpenAPI's own Schema Object keywords, and `components` for the document's local references.
    ajv.addVocabulary(['discriminator', 'xml', 'externalDocs', 'example', 'components'])
    const schemas: unknown[] = Object.values(document.components.schemas ?? {})
    for (const { operation } of operations()) {
      const parameters = (operation as { parameters?: Array<{ schema?: unknown }> }).parameters ?? []
      schemas.push(...parameters.map((parameter) => parameter.schema))
      const body = (operation as { requestBody?: { content?: Record<string, { schema?: unknown }> } }).requestBody
      schemas.push(...Object.values(body?.content ?? {}).map((media) => media.schema))
      for (const response of Object.values(operation.responses)) {
        schemas.push(...Object.values(response.content ?? {}).map((media) => media.schema))
      }
    }
    const components = { components: document.components }
    for (const schema of schemas.filter((entry) => entry !== undefined)) {
      // Local references point into the document's components.
      expect(() => ajv.compile({ ...(schema as object), ...components })).not.toThrow()
    }
  })

  it('describes success bodies without unions, which the response serialiser would check value by value', () => {
    const unions: string[] = []
    const visit = (schema: unknown, where: string): void => {
      if (Array.isArray(schema)) return schema.forEach((item, index) => visit(item, `${where}[${index}]`))
      if (!schema || typeof schema !== 'object') return
      for (const [key, value] of Object.entries(schema)) {
        if (key === 'anyOf' || key === 'oneOf') unions.push(where)
        visit(value, `${where}.${key}`)
      }
    }
    for (const { path, method, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status.startsWith('2')) visit(response.content, `${method.toUpperCase()} ${path} ${status}`)
      }
    }
    // One union by contract: login answers a session, or, for a user with a second factor, its second step. The two
    // bodies share no required property and `mfaRequired` is required in one, so the serialiser's check picks one at
    // the first property; and a login costs a bcrypt comparison, against which that check is nothing.
    expect(unions).toEqual(['POST /v1/login 200.application/json.schema'])
    const login = document.paths['/v1/login']?.post?.responses['200']?.content?.['application/json']?.schema
    expect(login).toEqual({ anyOf: [{ $ref: '#/components/schemas/LoginResponse' }, { $ref: '#/components/schemas/MfaRequiredResponse' }] })
  })

  it('documents every route the app registers, except HEAD and its own documentation routes', () => {
    const expected = registered.filter((route) => route.method !== 'HEAD' && !isDocsRoute(route.url))
    expect(expected.length).toBeGreaterThan(0)
    const missing = expected
      .filter((route) => !document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()])
      .map((route) => `${route.method} ${route.url}`)
    expect(missing).toEqual([])
    const documentedDocsRoutes = Object.keys(document.paths).filter(isDocsRoute)
    expect(documentedDocsRoutes).toEqual([])
  })

  it('declares bearer and cookie credentials, required on every route that reads an access token', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    expect(document.components.securitySchemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_access_token' })
    expect(document.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }])
    // The routes a cookie of their own authenticates name it, so a generated client knows to send it.
    expect(document.components.securitySchemes.refreshCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_refresh_token' })
    expect(document.components.securitySchemes.mfaCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_mfa_token' })
    const ownCookie: Partial<Record<Credential, unknown>> = { 'refresh-cookie': [{ refreshCookie: [] }], 'mfa-token': [{ mfaCookie: [] }] }
    for (const route of registered.filter((entry) => entry.method !== 'HEAD' && !isDocsRoute(entry.url))) {
      const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()]
      if (!operation || route.url.startsWith('/internal/') || route.url === '/v1/sms/solapi/webhook') continue
      const withKey = [{ bearerAuth: [] }, { cookieAuth: [] }, { integratorKey: [] }]
      const expected = route.publicRoute ? (ownCookie[route.credential] ?? []) : route.admitsKeys ? withKey : undefined
      expect({ route: route.url, security: operation.security }).toEqual({ route: route.url, security: expected })
    }
  })

  it('documents problem+json error responses on every operation', () => {
    for (const { path, method, operation } of operations()) {
      const errors = Object.entries(operation.responses).filter(([status]) => /^[45]/.test(status))
      const problems = errors.filter(([, response]) => response.content?.['application/problem+json'])
      expect({ operation: `${method} ${path}`, has4xx: problems.some(([s]) => s.startsWith('4')), has5xx: problems.some(([s]) => s.startsWith('5')) })
        .toEqual({ operation: `${method} ${path}`, has4xx: true, has5xx: true })
    }
  })

  it('tags signed operations calls and the provider callback wherever they exist', () => {
    for (const { path, operation } of operations()) {
      if (path.startsWith('/internal/')) {
        expect(operation.tags).toEqual(['internal'])
        expect(operation.description).toMatch(/X-Tenant-Slug.*X-Timestamp.*X-Signature/s)
      }
      if (path === '/v1/sms/solapi/webhook') expect(operation.tags).toEqual(['provider-callback'])
    }
  })
})

describe('documentRoute (the document transform)', () => {
  const transform = (url: string, config: Record<string, unknown>, schema: Record<string, unknown>) =>
    documentRoute({
      url,
      schema,
      route: { method: 'POST', url, config, handler: async () => undefined } as RouteOptions,
      openapiObject: {},
    }).schema as Record<string, unknown> & { response: Record<string, { content?: Record<string, unknown> }> }

  it('marks routes that read no access token as needing no credentials or their own cookie, and leaves the rest to the global default', () => {
    expect(transform('/v1/login', { access: 'public' }, {}).security).toEqual([])
    expect(transform('/v1/refresh', { access: 'refresh-cookie' }, {}).security).toEqual([{ refreshCookie: [] }])
    expect(transform('/v1/login/mfa', { access: 'mfa-cookie' }, {}).security).toEqual([{ mfaCookie: [] }])
    expect(transform('/v1/me', { access: 'user' }, {}).security).toBeUndefined()
  })

  it('documents one problem+json response per status the route can answer, whatever Problem statuses it declares', () => {
    const declared = { response: { 200: Type.Object({}), 409: ProblemSchema, '5xx': ProblemSchema }, problems: ['VERSION_CONFLICT'] }
    const documented = transform('/v1/things', { access: 'owner' }, declared)
    expect(Object.keys(documented.response).sort()).toEqual(['200', '400', '401', '403', '409', '413', '415', '500', '503'])
    expect(documented.response['409']?.content).toHaveProperty(['application/problem+json', 'schema', 'allOf', 1, 'properties', 'code'], {
      type: 'string',
      enum: ['VERSION_CONFLICT'],
    })
    expect(documented.response['200']?.content).toBeUndefined()
  })

  it('still documents success for a route that declares no response schema', () => {
    expect(Object.keys(transform('/v1/undeclared', { access: 'user' }, {}).response)).toContain('default')
  })

  it('keeps a non-problem error body as declared next to the problem of that status (503 DOWN, or closing)', () => {
    const down = Type.Object({ status: Type.Literal('DOWN') })
    const documented = transform('/actuator/health', { access: 'public' }, { response: { 503: down } }).response['503']
    expect(documented?.content?.['application/json']).toEqual({ schema: down })
    expect(documented?.content).toHaveProperty(['application/problem+json', 'schema', 'allOf', 1, 'properties', 'code', 'enum'], ['SERVICE_UNAVAILABLE'])
  })

  it('tags signed routes as operations calls with their own header credentials', () => {
    const documented = transform('/internal/sms/sender-settings/:tenantSlug/approval', { access: 'internal-signed' }, { tags: ['sms'], description: 'Approve.' })
    expect(documented.tags).toEqual(['internal'])
    expect(documented.description).toMatch(/^Approve\.\n\nSigned operations call/)
    expect(documented.security).toEqual([{ internalTenantSlug: [], internalTimestamp: [], internalSignature: [] }])
  })

  it('tags the provider webhook as a provider callback authenticated by X-Provider-Secret', () => {
    const documented = transform('/v1/sms/solapi/webhook', { access: 'provider-callback' }, {})
    expect(documented.tags).toEqual(['provider-callback'])
    expect(documented.security).toEqual([{ providerSecret: [] }])
  })
})

describe(`GET ${DOCS_PREFIX}`, () => {
  const app = useTestApp()

  it('serves the interactive documentation without credentials', async () => {
    const response = await app.current.inject({ method: 'GET', url: DOCS_PREFIX })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/html/)
    expect(response.body).toContain('swagger-ui')
  })
})
