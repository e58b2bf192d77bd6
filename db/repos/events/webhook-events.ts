import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export interface EventClaim {
  tenantId: number
  eventId: number
  claimToken: string
}

/**
 * Claims up to `batchSize` due events across tenants for `leaseSeconds` through svc_claim_due_webhook_events: every
 * tenant's oldest before any tenant's next, and no tenant past `tenantLimit` live claims counting every instance's
 * (SKIP LOCKED too: instances never claim the same event at once); ids and tokens only.
 */
export async function claimDueEvents(db: Kysely<DB>, batchSize: number, leaseSeconds: number, tenantLimit: number): Promise<EventClaim[]> {
  const { rows } = await sql<EventClaim>`
    select tenant_id, event_id, claim_token from svc_claim_due_webhook_events(${batchSize}, ${leaseSeconds}, ${tenantLimit})`.execute(db)
  return rows
}

/** A claimed event with what its delivery needs: the tenant's endpoint now (its URL and sealed secret). */
export interface ClaimedEvent {
  webhookId: string
  body: string
  attempts: number
  url: string | null
  secretSealed: string | null
}

/** The event if this claim still holds it, with the tenant's current endpoint (null fields when it has none). */
export function findClaimedEvent(trx: TenantTx, claim: EventClaim): Promise<ClaimedEvent | undefined> {
  return trx
    .selectFrom('webhookEvents as v')
    .leftJoin('webhookEndpoints as e', 'e.tenantId', 'v.tenantId')
    .select(['v.webhookId', 'v.body', 'v.attempts', 'e.url', 'e.secretSealed'])
    .where('v.id', '=', claim.eventId)
    .where('v.claimToken', '=', claim.claimToken)
    .where('v.deliveredAt', 'is', null)
    .where('v.givenUpAt', 'is', null)
    .executeTakeFirst()
}

/** How an attempt ended: delivered, tried again at `retryAt`, or given up. */
export type AttemptRecord =
  | { kind: 'delivered' }
  | { kind: 'retry'; retryAt: Date; error: string }
  | { kind: 'given-up'; error: string }

/** Writes an attempt's end under the claim (a lost claim writes nothing) and releases it; the attempt is counted. */
export async function recordAttempt(trx: TenantTx, claim: EventClaim, record: AttemptRecord): Promise<boolean> {
  const result = await trx
    .updateTable('webhookEvents')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      claimToken: null,
      claimedUntil: null,
      ...(record.kind === 'delivered' ? { deliveredAt: sql<Date>`now()`, lastError: null } : { lastError: record.error.slice(0, 500) }),
      ...(record.kind === 'retry' ? { nextAttemptAt: record.retryAt } : {}),
      ...(record.kind === 'given-up' ? { givenUpAt: sql<Date>`now()` } : {}),
    }))
    .where('id', '=', claim.eventId)
    .where('claimToken', '=', claim.claimToken)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Gives a claim back untouched (shutdown before its delivery started): due again at once, for any instance. */
export async function releaseClaim(trx: TenantTx, claim: EventClaim): Promise<void> {
  await trx
    .updateTable('webhookEvents')
    .set({ claimToken: null, claimedUntil: null })
    .where('id', '=', claim.eventId)
    .where('claimToken', '=', claim.claimToken)
    .execute()
}
