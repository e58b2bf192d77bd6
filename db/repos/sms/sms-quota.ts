import { sql } from 'kysely'
import { executeHeld } from '../../driver/statement-flags.js'
import type { TenantTx } from '../../tenant-transaction.js'

// Both statements answer nothing and refuse by raising SV020 (quotaRefusalOf in db/errors.ts), so the pipelined
// driver holds them back and writes them with the transaction's next statement (executeHeld): neither costs a
// round trip. The reservation's next statement is the commit: every driver refuses any other.

/**
 * The daily recipient quota: `limit` recipients (SVC_SMS_TENANT_DAILY_RECIPIENTS; 0: no limit) per local day of
 * `timeZone` (SVC_TIME_ZONE), unless the tenant has its own (tenants.daily_recipient_quota, npm run tenant:quota).
 */
export interface DailyQuota {
  limit: number
  timeZone: string
}

/**
 * Refuses early, before a send writes anything, when `count` recipients no longer fit into the tenant's count for
 * the current local day. Locks nothing; `reserveDailyRecipients` decides.
 */
export async function checkDailyRecipients(trx: TenantTx, tenantId: number, count: number, quota: DailyQuota): Promise<void> {
  // With no service-wide limit the early check is skipped: a tenant's own quota is still enforced by the reservation
  // at commit, which is what decides; this check only spares a send the work of writing itself.
  if (quota.limit === 0) return
  await executeHeld(
    trx,
    sql`select svc_check_daily_quota(${tenantId}::bigint, ${count}::int, ${quota.limit}::int, ${quota.timeZone}::text)`,
  )
}

/**
 * Adds `count` recipients to the tenant's counter for the current local day if that stays within the limit (0: no
 * limit), else the transaction fails with SV020 (its DETAIL: seconds to the next local midnight). Locks the counter
 * row until the transaction ends, so it is the transaction's last statement (`executeHeld(..., { last: true })`: any
 * later statement is refused with StatementAfterLastError) and travels with the commit, and other sends of the
 * tenant never wait for a transaction still at work (db/functions/svc_reserve_daily_quota.sql).
 */
export async function reserveDailyRecipients(trx: TenantTx, tenantId: number, count: number, quota: DailyQuota): Promise<void> {
  await executeHeld(
    trx,
    sql`select svc_reserve_daily_quota(${tenantId}::bigint, ${count}::int, ${quota.limit}::int, ${quota.timeZone}::text)`,
    { last: true },
  )
}

/** Gives back recipients of a cancelled message to the local day it was accepted on (never below zero). */
export async function releaseDailyRecipients(
  trx: TenantTx,
  tenantId: number,
  accepted: { at: Date; timeZone: string },
  count: number,
): Promise<void> {
  if (count <= 0) return
  await sql`
    update sms_daily_usage set recipients = greatest(recipients - ${count}::int, 0), updated_at = now()
    where tenant_id = ${tenantId} and day = (${accepted.at}::timestamptz at time zone ${accepted.timeZone}::text)::date`.execute(trx)
}
