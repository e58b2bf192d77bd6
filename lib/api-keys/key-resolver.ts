import type { Kysely } from 'kysely'
import { findApiKeyCredential, findApiKeyTenant } from '../../db/repos/api-keys/api-keys.js'
import type { DB, Role } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { apiKeyHashMatches, type PresentedApiKey } from './key.js'
import type { ApiKeyScope } from './scopes.js'

/** Who a verified key acts as: its creator, in the creator's tenant, within the key's scopes. */
export interface ApiKeyCaller {
  apiKeyId: number
  tenantId: number
  tenantSlug: string
  userId: number
  /** The creator's role when this instance first saw the key (OWNER or MANAGER; see `ApiKeyResolver`). */
  role: Role
  scopes: readonly ApiKeyScope[]
}

interface Known {
  caller: ApiKeyCaller
  keyHash: Buffer
  expiresAtMs: number | null
}

/**
 * Finds the key a request presents, by its lookup id: the tenant and id through the directory (ids only), then the
 * key's fixed parts (hash, scopes, expiry, creator) in that tenant's transaction, under RLS. What it keeps per lookup
 * id never changes for a key, so keeping it is safe: whether the key is revoked, whether the creator is still an
 * ACTIVE OWNER or MANAGER and whether the tenant is ACTIVE are checked by the request's own transaction on every
 * request (svc_api_key_scope), so a revocation on one instance stops the key on every instance at its next request.
 *
 * The creator's role is kept as first seen: it only matters between OWNER and MANAGER (any other role refuses the
 * key in the database), and every route that admits keys admits both (plugins/platform/access.ts checks it at start).
 *
 * An unknown lookup id is remembered too (it cannot turn into a key later: lookup ids are 96 random bits, and a key
 * created here forgets it), so an unknown key and a wrong key of a known lookup id both cost one hash and one
 * constant-time comparison, and a flood of invented keys reaches the database once per id. Bounded: the oldest
 * entry goes first.
 */
export class ApiKeyResolver {
  readonly #entries = new Map<string, Known | null>()

  constructor(
    private readonly db: Kysely<DB>,
    private readonly capacity: number,
  ) {}

  /** The caller, or null for a key that is unknown, wrong or expired (the same answer for each). */
  async resolve(presented: PresentedApiKey, nowMs: number): Promise<ApiKeyCaller | null> {
    let known = this.#entries.get(presented.lookupId)
    if (known === undefined) {
      known = await this.#load(presented.lookupId)
      this.#remember(presented.lookupId, known)
    }
    if (!apiKeyHashMatches(presented.keyHash, known?.keyHash ?? null) || !known) return null
    if (known.expiresAtMs !== null && known.expiresAtMs <= nowMs) return null
    return known.caller
  }

  /** A key just created on this instance: forget that its lookup id was once unknown. */
  forget(lookupId: string): void {
    this.#entries.delete(lookupId)
  }

  async #load(lookupId: string): Promise<Known | null> {
    const found = await findApiKeyTenant(this.db, lookupId)
    if (!found) return null
    const credential = await withTenant(this.db, found.tenantId, (trx) => findApiKeyCredential(trx, found.apiKeyId))
    if (!credential) return null
    return {
      keyHash: credential.keyHash,
      expiresAtMs: credential.expiresAt?.getTime() ?? null,
      caller: {
        apiKeyId: found.apiKeyId,
        tenantId: found.tenantId,
        tenantSlug: credential.tenantSlug,
        userId: credential.createdBy,
        role: credential.creatorRole,
        scopes: credential.scopes as ApiKeyScope[],
      },
    }
  }

  #remember(lookupId: string, known: Known | null): void {
    if (this.capacity <= 0) return
    if (this.#entries.size >= this.capacity) {
      const oldest = this.#entries.keys().next()
      if (!oldest.done) this.#entries.delete(oldest.value)
    }
    this.#entries.set(lookupId, known)
  }
}
