import type { RouteOptions } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CATALOG, OTHER_STATUSES } from '../../lib/errors.js'
import { standaloneDocument } from '../../lib/openapi/standalone-document.js'
import { DOCS_PREFIX, OPENAPI_PATH } from '../../plugins/platform/swagger.js'
import { useTestApp } from '../support/helper.js'

interface Parameter {
  in: string
  name: string
  required?: boolean
  schema?: { default?: unknown }
}
interface Response {
  headers?: Record<string, { $ref?: string }>
  content?: Record<string, { schema?: { allOf?: Array<{ properties?: { code?: { enum?: string[] } } }> } }>
}
interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  parameters?: Parameter[]
  responses: Record<string, Response>
}
interface Document {
  components: { schemas: Record<string, { enum?: unknown[] }>; headers: Record<string, unknown> }
  paths: Record<string, Record<string, Operation>>
}

const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/(.)\/$/, '$1')

describe('the OpenAPI document, as a client generator reads it', () => {
  let document: Document
  const idempotent = new Set<string>()

  const app = useTestApp({ before: (fastify) => {
      fastify.addHook('onRoute', (route: RouteOptions) => {
        if (route.config?.idempotency) idempotent.add(`${String(route.method).toLowerCase()} ${openApiPath(route.url)}`)
      })
    } })
  beforeAll(async () => {
    document = (await app.current.inject({ method: 'GET', url: OPENAPI_PATH })).json()
  })

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, operation })),
    )

  it('names every resource and the problem body as a component', () => {
    const names = Object.keys(document.components.schemas)
    for (const name of ['Problem', 'User', 'UserSummary', 'Session', 'SmsMessage', 'SmsRecipient', 'SmsMessagePage', 'SmsTemplate']) {
      expect(names).toContain(name)
    }
    for (const name of ['SmsTemplatePage', 'RecipientGroup', 'RecipientGroupSummary', 'SenderSetting', 'SenderSettingStatus']) {
      expect(names).toContain(name)
    }
  })

  it('has enums for statuses, roles and categories, and the whole error catalog as ProblemCode', () => {
    const enumOf = (name: string) => document.components.schemas[name]?.enum
    expect(enumOf('ProblemCode')).toEqual(Object.keys(ERROR_CATALOG))
    expect(enumOf('SmsStatus')).toEqual(['PENDING', 'DISPATCHED', 'SENT', 'FAILED', 'PARTIAL', 'CANCELLED'])
    expect(enumOf('DeliveryStatus')).toEqual(['PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED', 'OPTED_OUT', 'NO_CONSENT', null])
    expect(enumOf('SmsPurpose')).toEqual(['INFORMATIONAL', 'ADVERTISEMENT'])
    expect(enumOf('DeviceCategory')).toEqual(['WEB', 'MOBILE', 'TABLET', 'DESKTOP'])
    expect(enumOf('Role')).toEqual(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'])
    expect(enumOf('TemplateCategory')).toEqual(['GENERAL', 'ATTENDANCE', 'PAYMENT', 'EXAM', 'CUSTOM'])
  })

  it('gives every operation a unique operationId, a summary and a tag', () => {
    const missing = operations().filter(({ operation }) => !operation.operationId || !operation.summary || !operation.tags?.length)
    expect(missing.map(({ key }) => key)).toEqual([])
    const ids = operations().map(({ operation }) => operation.operationId)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('lists under each status only codes the catalog gives that status, or one of its other statuses (OTHER_STATUSES)', () => {
    const misplaced: string[] = []
    const elsewhere: string[] = []
    for (const { key, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const codes = response.content?.['application/problem+json']?.schema?.allOf?.[1]?.properties?.code?.enum ?? []
        for (const code of codes) {
          const others: readonly number[] = OTHER_STATUSES[code as keyof typeof OTHER_STATUSES] ?? []
          if (others.includes(Number(status))) elsewhere.push(`${key} ${status} ${code}`)
          else if (ERROR_CATALOG[code as keyof typeof ERROR_CATALOG][0] !== Number(status)) misplaced.push(`${key} ${status} ${code}`)
        }
      }
    }
    expect(misplaced).toEqual([])
    // A send without a linked Kakao channel: 409, where reading the channel answers 404.
    expect(elsewhere).toEqual(['post /v1/sms/send 409 KAKAO_CHANNEL_NOT_FOUND', 'post /v1/sms/send/class/{classId} 409 KAKAO_CHANNEL_NOT_FOUND'])
  })

  it('requires Idempotency-Key exactly where the idempotency plugin refuses a request without one', () => {
    expect(idempotent.size).toBeGreaterThan(0)
    for (const { key, operation } of operations()) {
      const header = operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key')
      expect({ key, required: header?.required ?? false }).toEqual({ key, required: idempotent.has(key) })
    }
  })

  it('leaves query parameters with a default optional: the server fills them in', () => {
    const query = operations().flatMap(({ key, operation }) => (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ key, p })))
    expect(query.filter(({ p }) => p.schema?.default !== undefined).length).toBeGreaterThan(0)
    for (const { key, p } of query.filter(({ p }) => p.schema?.default !== undefined)) {
      expect({ key, name: p.name, required: p.required }).toEqual({ key, name: p.name, required: false })
    }
  })

  it('documents X-Request-Id on every response, Retry-After on every 429 and 503 that only answers problems', () => {
    for (const { key, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(response.headers ?? {})
        expect({ key, status, requestId: headers.includes('X-Request-Id') }).toEqual({ key, status, requestId: true })
        const problemsOnly = Object.keys(response.content ?? {}).join() === 'application/problem+json'
        if ((status === '429' || status === '503') && problemsOnly) {
          expect({ key, status, headers }).toEqual({ key, status, headers: expect.arrayContaining(['Retry-After']) })
        }
      }
    }
    expect(Object.keys(document.components.headers)).toEqual(expect.arrayContaining(['X-Request-Id', 'Retry-After', 'Idempotent-Replayed']))
  })

  it('documents the token cookies on sign-in and sign-out, and Idempotent-Replayed on idempotent successes', () => {
    const headersOf = (method: string, path: string, status: string) => Object.keys(document.paths[path]?.[method]?.responses[status]?.headers ?? {})
    for (const [path, status] of [['/v1/login', '200'], ['/v1/register', '201'], ['/v1/register/owner', '201'], ['/v1/refresh', '200'], ['/v1/logout', '204']]) {
      expect({ path, headers: headersOf('post', path!, status!) }).toEqual({ path, headers: expect.arrayContaining(['Set-Cookie']) })
    }
    expect(headersOf('post', '/v1/sms/send', '201')).toContain('Idempotent-Replayed')
  })

  it('documents X-Device-Category where a session opens', () => {
    for (const path of ['/v1/login', '/v1/register', '/v1/register/owner']) {
      const header = document.paths[path]?.post?.parameters?.find((parameter) => parameter.name === 'X-Device-Category')
      expect({ path, in: header?.in, required: header?.required }).toEqual({ path, in: 'header', required: false })
    }
  })

  it('is what npm run openapi writes, built without a database (lib/openapi/standalone-document.ts)', async () => {
    expect(await standaloneDocument()).toEqual(document)
  })

  it('has Swagger UI explore /openapi.json', async () => {
    const initializer = await app.current.inject({ method: 'GET', url: `${DOCS_PREFIX}/static/swagger-initializer.js` })
    expect(initializer.statusCode).toBe(200)
    expect(initializer.body).toContain(`"urls":[{"url":"${OPENAPI_PATH}"`)
  })
})
