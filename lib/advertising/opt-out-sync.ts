import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { addProviderRefusals } from '../../db/repos/advertising/opt-outs.js'
import { advanceSync, claimSync, releaseSync, tenantsToSync, type SyncCursor } from '../../db/repos/advertising/opt-out-syncs.js'
import { findSenderSetting, LIVE_PROVIDER } from '../../db/repos/sms/sender-settings.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { NO_ORIGIN, recordAuditEvent } from '../audit/record.js'
import type { RefusalList } from '../dispatch/providers/refusal-list.js'
import { maskPhone, normalizePhone } from '../sms/phone.js'

/**
 * Refusals made at the 080 number (docs/api.md#advertising): every SVC_OPT_OUT_SYNC_SECONDS, for every tenant with
 * an opt-out number and an APPROVED sender number (ids found by db/functions/svc_opt_out_sync_tenants.sql), reads
 * the provider's refusal list of that sender number and puts each refused number on the tenant's opt-out list
 * (source PROVIDER_080, audited OPT_OUT_ADDED). The hand-over then leaves those numbers out of any advertisement
 * still held (lib/dispatch/prepare-hand-over.ts).
 * - One reader per tenant across instances: a claimed row with a lease (db/repos/advertising/opt-out-syncs.ts).
 * - Incremental: a walk starts at the newest refusal seen (dateCreated[gte]; the refusals of that instant read again
 *   add nothing, the list's key is the number) and follows nextKey; each page is committed with the cursor, so a
 *   provider failure on page two leaves page one listed and the next run goes on with page two.
 * - The provider is called between transactions, never inside one.
 * - Only refusals of the tenant's own sender number are taken, whatever the provider answers: one provider account
 *   serves every tenant, and another academy's refusals must never touch this one's list.
 */

export interface OptOutSyncJob {
  db: Kysely<DB>
  list: RefusalList
  /** How long a reader's claim lasts without a page; a crashed reader frees the tenant after it. */
  leaseSeconds?: number
  pageSize?: number
  /** A bound per tenant and run: a list longer than this goes on at the next run. */
  maxPages?: number
  onTenantFailure?: (tenantId: number, error: unknown) => void
}

export interface SyncRound {
  tenants: number
  added: number
}

/** Why a tenant's reading stopped before the end of its list; the next run goes on from the last committed page. */
export class RefusalListError extends Error {
  constructor(readonly tenantId: number, readonly reason: string) {
    super(`reading the 080 list of tenant ${tenantId} failed: ${reason}`)
    this.name = 'RefusalListError'
  }
}

const DEFAULT_LEASE_SECONDS = 120
const DEFAULT_PAGE_SIZE = 500
const DEFAULT_MAX_PAGES = 200

export async function syncOptOuts(job: OptOutSyncJob): Promise<SyncRound> {
  const round: SyncRound = { tenants: 0, added: 0 }
  for (const tenantId of await tenantsToSync(job.db, LIVE_PROVIDER)) {
    try {
      const added = await syncTenant(job, tenantId)
      if (added !== null) {
        round.tenants += 1
        round.added += added
      }
    } catch (error) {
      job.onTenantFailure?.(tenantId, error)
    }
  }
  return round
}

/** Reads one tenant's list from where it stands; null when another reader holds it or it has no sender number now. */
export async function syncTenant(job: OptOutSyncJob, tenantId: number): Promise<number | null> {
  const leaseSeconds = job.leaseSeconds ?? DEFAULT_LEASE_SECONDS
  const token = randomUUID()
  const claimed = await withTenant(job.db, tenantId, async (trx) => {
    const sender = await findSenderSetting(trx)
    if (sender?.registrationStatus !== 'APPROVED' || !sender.senderNumber) return undefined
    return claimSync(trx, tenantId, sender.senderNumber, token, leaseSeconds)
  })
  if (claimed === undefined) return null
  let cursor: SyncCursor = claimed
  let added = 0
  try {
    for (let pages = 0; pages < (job.maxPages ?? DEFAULT_MAX_PAGES); pages += 1) {
      const walkFrom = cursor.nextKey === null ? cursor.newestSeen : cursor.walkFrom
      const page = await job.list.readPage({
        senderNumber: cursor.senderNumber,
        since: walkFrom,
        startKey: cursor.nextKey,
        limit: job.pageSize ?? DEFAULT_PAGE_SIZE,
      })
      if (page.kind !== 'ok') throw new RefusalListError(tenantId, page.error)
      const own = page.refusals.filter((refusal) => refusal.senderNumber === cursor.senderNumber)
      const phones = own.map((refusal) => normalizePhone(refusal.recipientNumber)).filter((phone) => phone !== null)
      const newest = page.refusals.reduce<Date | null>((latest, refusal) => (latest === null || refusal.dateCreated > latest ? refusal.dateCreated : latest), null)
      added += await withTenant(job.db, tenantId, async (trx) => {
        if (!(await advanceSync(trx, tenantId, token, { walkFrom, nextKey: page.nextKey, newest, leaseSeconds }))) {
          throw new RefusalListError(tenantId, 'another reader took the list over')
        }
        const listed = await addProviderRefusals(trx, tenantId, phones)
        for (const phone of listed) {
          await recordAuditEvent(trx, tenantId, NO_ORIGIN, {
            type: 'OPT_OUT_ADDED',
            targetId: null,
            details: { phone: maskPhone(phone), source: 'PROVIDER_080' },
          })
        }
        return listed.length
      })
      cursor = {
        senderNumber: cursor.senderNumber,
        walkFrom: page.nextKey === null ? null : walkFrom,
        nextKey: page.nextKey,
        newestSeen: newest !== null && (cursor.newestSeen === null || newest > cursor.newestSeen) ? newest : cursor.newestSeen,
      }
      if (page.nextKey === null) break
    }
  } finally {
    await withTenant(job.db, tenantId, (trx) => releaseSync(trx, tenantId, token))
  }
  return added
}
