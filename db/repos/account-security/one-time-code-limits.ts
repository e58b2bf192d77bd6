import { sql, type RawBuilder } from 'kysely'
import type { TenantTx } from '../../tenant-transaction.js'

// Every counter counts codes per local day of SVC_TIME_ZONE, raised by one conditional upsert: concurrent requests
// serialise on the counter row and never pass the limit together. one_time_code_days and phone_verification_days
// are tenant tables (RLS); one_time_code_phone_days counts across tenants and has no RLS, so any transaction may
// write it.

/** A counter's answer: counted, or refused with the whole seconds until the next local midnight. */
export type DailyCount = { counted: true } | { counted: false; secondsToNextDay: number }

interface CountRow {
  codes: number | null
  secondsToNextDay: number
}

const today = (timeZone: string) => sql`(now() at time zone ${timeZone}::text)::date`

/** Runs `upsert` (an insert ... on conflict that raises `codes` only below the limit) and reads its answer. */
async function countOnce(trx: TenantTx, upsert: RawBuilder<unknown>, timeZone: string): Promise<DailyCount> {
  const { rows } = await sql<CountRow>`
    with counted as (${upsert} returning codes)
    select (select codes from counted) as codes, svc_seconds_to_local_midnight(${timeZone}::text) as seconds_to_next_day`.execute(trx)
  const row = rows[0]
  return row && row.codes !== null ? { counted: true } : { counted: false, secondsToNextDay: row?.secondsToNextDay ?? 1 }
}

/** Counts one code for the user today, unless `limit` codes were already counted. */
export function countUserCode(trx: TenantTx, user: { tenantId: number; userId: number }, limit: number, timeZone: string): Promise<DailyCount> {
  return countOnce(
    trx,
    sql`insert into one_time_code_days as d (tenant_id, user_id, day, codes)
        values (${user.tenantId}, ${user.userId}, ${today(timeZone)}, 1)
        on conflict (tenant_id, user_id, day) do update set codes = d.codes + 1 where d.codes < ${limit}`,
    timeZone,
  )
}

/**
 * Counts one code to a verified phone number (its key) today, whichever tenant sends it, unless `limit` were counted:
 * the brake on SMS pumping through one number behind accounts of many academies.
 */
export function countPhoneCode(trx: TenantTx, phoneKey: string, limit: number, timeZone: string): Promise<DailyCount> {
  return countOnce(
    trx,
    sql`insert into one_time_code_phone_days as d (phone_key, day, codes)
        values (${phoneKey}, ${today(timeZone)}, 1)
        on conflict (phone_key, day) do update set codes = d.codes + 1 where d.codes < ${limit}`,
    timeZone,
  )
}

/**
 * Counts one code that verifies a number, on one of the tenant's own counters today (`counter`: 'tenant' for the
 * tenant's total, else the number's key), unless `limit` were counted. Nothing another tenant did moves it.
 */
export function countTenantVerification(
  trx: TenantTx,
  tenantId: number,
  counter: string,
  limit: number,
  timeZone: string,
): Promise<DailyCount> {
  return countOnce(
    trx,
    sql`insert into phone_verification_days as d (tenant_id, counter, day, codes)
        values (${tenantId}, ${counter}, ${today(timeZone)}, 1)
        on conflict (tenant_id, counter, day) do update set codes = d.codes + 1 where d.codes < ${limit}`,
    timeZone,
  )
}
