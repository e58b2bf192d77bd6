import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { listApiKeys, type ApiKeyRecord } from '../../db/repos/api-keys/api-keys.js'
import { createApiKey, revokeKey } from '../../lib/api-keys/api-keys.js'
import type { ApiKeyScope } from '../../lib/api-keys/scopes.js'
import { auditOriginOf } from '../../lib/audit/origin.js'
import { AppError } from '../../lib/errors.js'
import { PathIdSchema } from '../../lib/http/id-schema.js'
import { ProblemSchema } from '../../lib/http/problem-schema.js'
import { ApiKeyListSchema, CreateApiKeyBodySchema, CreatedApiKeySchema, type ApiKey } from './api-keys.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

function toApiKey(record: ApiKeyRecord): ApiKey {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes as ApiKeyScope[],
    prefix: record.prefix,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    lastUsedAt: record.lastUsedAt?.toISOString() ?? null,
  }
}

// The academy's integrator keys (docs/api.md#api-keys): its OWNER's alone, and never reachable with a key (the
// access names no key scope), so a leaked key cannot make itself another.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/api-keys',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key (the answer carries the key, once)',
        tags: ['api-keys'],
        body: CreateApiKeyBodySchema,
        problems: ['API_KEY_LIMIT'],
        response: { 201: CreatedApiKeySchema, 400: ProblemSchema, 409: ProblemSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { name, scopes, expiresAt } = request.body
      const wanted = { name: name.trim(), scopes, expiresAt: expiresAt ? new Date(expiresAt) : null }
      const { tenantId, userId } = request.caller
      const created = await createApiKey(request.db, tenantId, userId, wanted, app.clock(), auditOriginOf(request))
      request.afterCommit(() => app.apiKeys.created(created.lookupId))
      return reply.code(201).send({ ...toApiKey(created.record), key: created.key })
    },
  )

  app.get(
    '/api-keys',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'listApiKeys',
        summary: "The academy's API keys that are not revoked, newest first (never the keys themselves)",
        tags: ['api-keys'],
        response: { 200: ApiKeyListSchema, ...errors },
      },
    },
    async (request) => ({ items: (await listApiKeys(request.db)).map(toApiKey) }),
  )

  app.delete(
    '/api-keys/:id',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key: refused from its next request on',
        tags: ['api-keys'],
        params: Type.Object({ id: PathIdSchema }),
        problems: ['API_KEY_NOT_FOUND'],
        response: { 204: Type.Null(), 404: ProblemSchema, ...errors },
      },
    },
    async (request, reply) => {
      const revoked = await revokeKey(request.db, request.caller.tenantId, request.params.id, app.clock(), auditOriginOf(request))
      if (!revoked) throw new AppError('API_KEY_NOT_FOUND')
      return reply.code(204).send(null)
    },
  )
}

export default routes
