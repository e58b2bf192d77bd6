import type { FastifyInstance } from 'fastify'
import type { LightMyRequestResponse } from 'fastify'
import type { ApiKeyScope } from '../../lib/api-keys/scopes.js'
import { owner } from '../support/fixtures.js'
import type { Actor } from '../support/staff-fixtures.js'

export interface IssuedKey {
  id: number
  key: string
  prefix: string
  /** `authorization: Bearer <key>` for app.inject. */
  headers: { authorization: string }
}

/** Creates a key through the API as `creator` (an OWNER), and returns it as the answer showed it, once. */
export async function issueKey(
  app: FastifyInstance,
  creator: Actor,
  scopes: ApiKeyScope[],
  extra: { name?: string; expiresAt?: string } = {},
): Promise<IssuedKey> {
  const response = await app.inject({
    method: 'POST',
    url: '/v1/api-keys',
    headers: creator.headers,
    payload: { name: extra.name ?? 'integration', scopes, ...(extra.expiresAt ? { expiresAt: extra.expiresAt } : {}) },
  })
  if (response.statusCode !== 201) throw new Error(`key creation answered ${response.statusCode}: ${response.body}`)
  const body = response.json<{ id: number; key: string; prefix: string }>()
  return { id: body.id, key: body.key, prefix: body.prefix, headers: { authorization: `Bearer ${body.key}` } }
}

export function withKey(app: FastifyInstance, key: IssuedKey, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, headers: { ...key.headers, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) })
}

/** The key's row as the owner connection sees it (bypassing RLS). */
export function keyRow(id: number) {
  return owner().selectFrom('apiKeys').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
}
