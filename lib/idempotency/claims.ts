import type { Kysely } from 'kysely'
import { completeKey, findKey, insertKey, releaseKey, takeOverKey, type KeyScope } from '../../db/repos/idempotency-keys.js'
import type { DB } from '../../db/schema.js'
import { type RequestScope, type TenantTx, withRequestTransaction, withTenant } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'

/** A key this request holds while it runs; `stamp` tells a takeover by a later retry apart from this claim. */
export interface Claim {
  scope: KeyScope
  stamp: Date
}

export type ClaimOutcome = { kind: 'claimed'; claim: Claim } | { kind: 'replay'; statusCode: number; body: unknown }

/** Reads the current representation of what a completed request created (for a replay). */
export type LoadCreated = (trx: TenantTx, resourceId: number) => Promise<unknown>

/** What a request asks of its key: the key, the request's fingerprint, and how long an unfinished claim holds it. */
export interface KeyRequest {
  scope: KeyScope
  fingerprint: string
  /**
   * SVC_IDEMPOTENCY_CLAIM_SECONDS: a claim still IN_PROGRESS after this long is taken over by the next request with
   * the key, and the request that held it can no longer complete (completeClaim checks the stamp).
   */
  claimSeconds: number
}

/**
 * Decides what a key means for this request, in a short transaction of its own that commits at once, so a
 * duplicate arriving while this request runs sees the claim and answers IDEMPOTENCY_REQUEST_IN_PROGRESS instead of
 * waiting. Opened like the request transaction, token checks included: a logged-out token must not read what it
 * once created (AUTH_004).
 */
export async function claimKey(db: Kysely<DB>, caller: RequestScope, request: KeyRequest, load: LoadCreated): Promise<ClaimOutcome> {
  return withRequestTransaction(db, caller, (trx) => claimOrReplay(trx, request, load))
}

async function claimOrReplay(trx: TenantTx, request: KeyRequest, load: LoadCreated): Promise<ClaimOutcome> {
  const { scope, fingerprint, claimSeconds } = request
  let existing = await findKey(trx, scope, claimSeconds)
  if (!existing) {
    const stamp = await insertKey(trx, scope, fingerprint)
    if (stamp) return { kind: 'claimed', claim: { scope, stamp } }
    existing = await findKey(trx, scope, claimSeconds)
    if (!existing) throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  // An expired key is as good as absent (the purge may simply not have run yet); a stale IN_PROGRESS one belonged to
  // a request that died, or ended without committing while the database was out of reach, and holds no result: any
  // retry may take it over.
  if (existing.expired || existing.stale) {
    const stamp = await takeOverKey(trx, scope, fingerprint, claimSeconds)
    if (stamp) return { kind: 'claimed', claim: { scope, stamp } }
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  if (existing.fingerprint !== fingerprint) throw new AppError('IDEMPOTENCY_KEY_REUSED')
  if (existing.state === 'IN_PROGRESS' || existing.resourceId === null) {
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
  const body = await load(trx, existing.resourceId)
  return { kind: 'replay', statusCode: existing.statusCode ?? 200, body }
}

/**
 * Records, inside the request transaction, that the claim's request created `resourceId` and answered
 * `statusCode`; the key then commits together with the resource.
 */
export async function completeClaim(trx: TenantTx, claim: Claim, resourceId: number, statusCode: number): Promise<void> {
  if (!(await completeKey(trx, claim.scope, claim.stamp, resourceId, statusCode))) {
    // The claim outlived its seconds and a retry took the key over: this request must not create a second resource.
    throw new AppError('IDEMPOTENCY_REQUEST_IN_PROGRESS')
  }
}

/**
 * Gives the key back so the client may correct the request and retry. Conditional on the key still being
 * IN_PROGRESS with this claim's stamp, so it can never undo a committed request.
 */
export function releaseClaim(db: Kysely<DB>, claim: Claim): Promise<void> {
  return withTenant(db, claim.scope.tenantId, (trx) => releaseKey(trx, claim.scope, claim.stamp))
}
