import { describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'

interface Operation {
  security?: Array<Record<string, string[]>>
  'x-api-key-scope'?: string
  description?: string
}
interface Document {
  components: { securitySchemes: Record<string, { type: string; scheme?: string; bearerFormat?: string }> }
  paths: Record<string, Record<string, Operation>>
  security: Array<Record<string, string[]>>
}

describe('API keys in the OpenAPI document', () => {
  const app = useTestApp()
  const document = async () => (await app.current.inject({ method: 'GET', url: '/openapi.json' })).json<Document>()

  it('declares the key as a bearer scheme of its own', async () => {
    const { components } = await document()
    expect(components.securitySchemes.integratorKey).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'svck_...' })
  })

  it('lists it, with its scope, on exactly the operations that admit a key', async () => {
    const { paths, security } = await document()
    const admitting = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => (operation.security ?? security).some((requirement) => 'integratorKey' in requirement))
        .map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation['x-api-key-scope']}`),
    )
    expect(admitting.sort()).toEqual(
      [
        'POST /v1/sms/send sms:send',
        'POST /v1/sms/send/class/{classId} sms:send',
        'POST /v1/sms/history/{id}/cancel sms:send',
        'POST /v1/sms/recipient-groups sms:send',
        'GET /v1/sms/history sms:read',
        'GET /v1/sms/history/{id} sms:read',
        'GET /v1/sms/recipient-groups sms:read',
        'GET /v1/sms/recipient-groups/{id} sms:read',
        'GET /v1/sms-templates sms:read',
        'POST /v1/sms-templates templates:write',
        'PATCH /v1/sms-templates/{id} templates:write',
        'DELETE /v1/sms-templates/{id} templates:write',
        'GET /v1/sms/opt-outs opt-outs:write',
        'POST /v1/sms/opt-outs opt-outs:write',
        'DELETE /v1/sms/opt-outs/{phone} opt-outs:write',
        'GET /v1/sms/ad-consents opt-outs:write',
        'POST /v1/sms/ad-consents opt-outs:write',
        'DELETE /v1/sms/ad-consents/{phone} opt-outs:write',
        'GET /v1/sms/usage usage:read',
      ].sort(),
    )
    expect(paths['/v1/sms/send']!.post!.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }, { integratorKey: [] }])
    expect(paths['/v1/me']!.get!.security).toBeUndefined()
  })
})
