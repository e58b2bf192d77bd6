import { Type, type Static } from '@sinclair/typebox'
import { API_KEY_SCOPES } from '../../lib/api-keys/scopes.js'
import { StringEnum } from '../../lib/http/response-types.js'

const ApiKeyScopeSchema = StringEnum(API_KEY_SCOPES, { $id: 'ApiKeyScope' })

export const CreateApiKeyBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'What the key is for (which server)' }),
    scopes: Type.Array(ApiKeyScopeSchema, { minItems: 1, maxItems: API_KEY_SCOPES.length, uniqueItems: true }),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the key stops working; omitted: never' })),
  },
  { additionalProperties: false, examples: [{ name: 'enrolment server', scopes: ['sms:send', 'sms:read'] }] },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>

const keyExample = {
  id: 7,
  name: 'enrolment server',
  scopes: ['sms:send', 'sms:read'],
  prefix: 'svck_Q2hhbmdl',
  createdAt: '2026-11-29T09:00:00.000Z',
  expiresAt: null,
  lastUsedAt: null,
}

const apiKeyFields = {
  id: Type.Integer(),
  name: Type.String(),
  scopes: Type.Array(ApiKeyScopeSchema),
  prefix: Type.String({ description: 'The first characters of the key, to tell keys apart; not usable as a key' }),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Updated at most once a minute' }),
}

export const ApiKeySchema = Type.Object(apiKeyFields, { $id: 'ApiKey', examples: [keyExample] })
export type ApiKey = Static<typeof ApiKeySchema>

export const CreatedApiKeySchema = Type.Object(
  { ...apiKeyFields, key: Type.String({ description: 'svck_ + 43 base64url characters. Shown in this answer only: keep it.' }) },
  { $id: 'CreatedApiKey', examples: [{ ...keyExample, key: 'svck_Q2hhbmdlIHRoaXMgZXhhbXBsZSBrZXkgYmVmb3JlIHVzZQ' }] },
)
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>

export const ApiKeyListSchema = Type.Object({ items: Type.Array(ApiKeySchema) }, { $id: 'ApiKeyList' })
