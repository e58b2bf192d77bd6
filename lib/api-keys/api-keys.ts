import {
  countLiveApiKeys,
  insertApiKey,
  lockApiKeyCreation,
  revokeApiKey,
  type ApiKeyRecord,
} from '../../db/repos/api-keys/api-keys.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../audit/record.js'
import { AppError } from '../errors.js'
import { generateApiKey } from './key.js'
import type { ApiKeyScope } from './scopes.js'

/** Live keys (neither revoked nor expired) a tenant may hold at once. */
export const MAX_LIVE_API_KEYS = 20

export interface NewKeyRequest {
  name: string
  scopes: ApiKeyScope[]
  expiresAt: Date | null
}

/**
 * Creates a key for the OWNER `createdBy`: the key itself goes back once, in the answer; only its SHA-256 is stored.
 * The 21st live key of a tenant is refused (API_KEY_LIMIT); creations of one tenant are serialised for that count.
 */
export async function createApiKey(
  trx: TenantTx,
  tenantId: number,
  createdBy: number,
  request: NewKeyRequest,
  now: Date,
  origin: AuditOrigin,
): Promise<{ record: ApiKeyRecord; key: string; lookupId: string }> {
  if (request.expiresAt && request.expiresAt.getTime() <= now.getTime()) {
    throw new AppError('VALIDATION_FAILED', 'expiresAt must be in the future.', { errors: [{ field: 'body.expiresAt', message: 'must be in the future' }] })
  }
  await lockApiKeyCreation(trx, tenantId)
  if ((await countLiveApiKeys(trx, now)) >= MAX_LIVE_API_KEYS) throw new AppError('API_KEY_LIMIT')
  const { key, lookupId, prefix, keyHash } = generateApiKey()
  const record = await insertApiKey(trx, { tenantId, lookupId, name: request.name, scopes: request.scopes, prefix, keyHash, createdBy, expiresAt: request.expiresAt })
  await recordAuditEvent(trx, tenantId, origin, {
    type: 'API_KEY_CREATED',
    targetId: record.id,
    details: { name: record.name, scopes: record.scopes, prefix: record.prefix },
  })
  return { record, key, lookupId }
}

/** Revokes a key: refused on its next request on any instance. False when no live or expired key has that id. */
export async function revokeKey(trx: TenantTx, tenantId: number, id: number, now: Date, origin: AuditOrigin): Promise<boolean> {
  const revoked = await revokeApiKey(trx, id, now)
  if (!revoked) return false
  await recordAuditEvent(trx, tenantId, origin, { type: 'API_KEY_REVOKED', targetId: revoked.id, details: { name: revoked.name } })
  return true
}
