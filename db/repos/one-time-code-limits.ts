import { sql } from 'kysely'
import type { TenantTx } from '../tenant-transaction.js'

// Both counters count codes per local day of SVC_TIME_ZONE, raised by one conditional upsert each: concurrent
// requests serialise on the counter row and never pass the limit together. one_time_code_days is a tenant table
// (RLS); one_time_code_phone_days counts across tenants and has no RLS, so any transaction may write it.

/** A counter's answer: counted, or refused with the whole seconds until the next local midnight. */
export type DailyCount = { counted: true } | { counted: false; secondsToNextDay: number }

interface CountRow {
  codes: number | null
  secondsToNextDay: number
}

const answer = (row: CountRow | undefined): DailyCount =>
  row && row.codes !== null ? { counted: true } : { counted: false, secondsToNextDay: row?.secondsToNextDay ?? 1 }

/** Counts one code for the user today, unless `limit` codes were already counted. */
export async function countUserCode(
  trx: TenantTx,
  user: { tenantId: number; userId: number },
  limit: number,
  timeZone: string,
): Promise<DailyCount> {
  const { rows } = await sql<CountRow>`
    with counted as (
      insert into one_time_code_days as d (tenant_id, user_id, day, codes)
      values (${user.tenantId}, ${user.userId}, (now() at time zone ${timeZone}::text)::date, 1)
      on conflict (tenant_id, user_id, day) do update set codes = d.codes + 1 where d.codes < ${limit}
      returning codes
    )
    select (select codes from counted) as codes, svc_seconds_to_local_midnight(${timeZone}::text) as seconds_to_next_day`.execute(trx)
  return answer(rows[0])
}

/** Counts one code for the phone number (its key) today, whichever tenant sends it, unless `limit` were counted. */
export async function countPhoneCode(trx: TenantTx, phoneKey: string, limit: number, timeZone: string): Promise<DailyCount> {
  const { rows } = await sql<CountRow>`
    with counted as (
      insert into one_time_code_phone_days as d (phone_key, day, codes)
      values (${phoneKey}, (now() at time zone ${timeZone}::text)::date, 1)
      on conflict (phone_key, day) do update set codes = d.codes + 1 where d.codes < ${limit}
      returning codes
    )
    select (select codes from counted) as codes, svc_seconds_to_local_midnight(${timeZone}::text) as seconds_to_next_day`.execute(trx)
  return answer(rows[0])
}
