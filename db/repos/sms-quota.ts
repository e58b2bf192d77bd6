import { sql } from 'kysely'
import { executeHeld } from '../driver/statement-flags.js'
import type { TenantTx } from '../tenant-transaction.js'

// Both statements answer nothing and refuse by raising SV020 (isQuotaExceeded in db/errors.ts), so the pipelined
// driver holds them back and writes them with the transaction's next statement (executeHeld): neither costs a
// round trip.

/**
 * Refuses early, before a send writes anything, when `count` recipients no longer fit into the tenant's count for
 * the current UTC day (0: no limit). Locks nothing; `reserveDailyRecipients` decides.
 */
export async function checkDailyRecipients(trx: TenantTx, tenantId: number, count: number, limit: number): Promise<void> {
  if (limit === 0) return
  await executeHeld(trx, sql`select svc_check_daily_recipients(${tenantId}::bigint, ${count}::int, ${limit}::int)`)
}

/**
 * Adds `count` recipients to the tenant's counter for the current UTC day if that stays within `limit` (0: no
 * limit), else the transaction fails with SV020. Locks the counter row until the transaction ends: send it as the
 * transaction's last statement, so that it travels with the commit and other sends of the tenant never wait for a
 * transaction still at work (db/functions/svc_reserve_daily_recipients.sql).
 */
export async function reserveDailyRecipients(trx: TenantTx, tenantId: number, count: number, limit: number): Promise<void> {
  await executeHeld(trx, sql`select svc_reserve_daily_recipients(${tenantId}::bigint, ${count}::int, ${limit}::int)`)
}

/** Gives back recipients of a cancelled message to the day it was accepted on (never below zero). */
export async function releaseDailyRecipients(trx: TenantTx, tenantId: number, acceptedAt: Date, count: number): Promise<void> {
  if (count <= 0) return
  await sql`
    update sms_daily_usage set recipients = greatest(recipients - ${count}::int, 0), updated_at = now()
    where tenant_id = ${tenantId} and day = (${acceptedAt}::timestamptz at time zone 'UTC')::date`.execute(trx)
}
