import { sql } from 'kysely'
import type { TenantTx } from '../tenant.js'

/**
 * Adds `count` recipients to the tenant's counter for the current UTC day if that stays within `limit` (0: no
 * limit). One conditional upsert: a concurrent send of the same tenant waits for this row's lock and then sees
 * the new total, so two sends can never both fit into the last free places. False (nothing changed) beyond it.
 */
export async function reserveDailyRecipients(trx: TenantTx, tenantId: number, count: number, limit: number): Promise<boolean> {
  if (limit > 0 && count > limit) return false
  const { rows } = await sql<{ recipients: number }>`
    insert into sms_daily_usage as u (tenant_id, day, recipients)
    values (${tenantId}, (now() at time zone 'UTC')::date, ${count})
    on conflict (tenant_id, day) do update
      set recipients = u.recipients + excluded.recipients, updated_at = now()
      where ${limit}::int = 0 or u.recipients + excluded.recipients <= ${limit}::int
    returning u.recipients`.execute(trx)
  return rows.length > 0
}

/** Gives back recipients of a cancelled message to the day it was accepted on (never below zero). */
export async function releaseDailyRecipients(trx: TenantTx, tenantId: number, acceptedAt: Date, count: number): Promise<void> {
  if (count <= 0) return
  await sql`
    update sms_daily_usage set recipients = greatest(recipients - ${count}::int, 0), updated_at = now()
    where tenant_id = ${tenantId} and day = (${acceptedAt}::timestamptz at time zone 'UTC')::date`.execute(trx)
}
