import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import { inBatches, type BatchLimits } from '../in-batches.js'

// Usage lives in sms_usage (totals per 15-minute UTC bucket of acceptance) and sms_usage_days (the same per local day
// of the zone sms_usage_zones names), plus the deltas of sms_usage_changes that the minute roll-up has not moved
// yet; all kept by triggers on sms_messages and the roll-up (db/migrations/2026-11-26T04-10-00-sms-usage.ts,
// db/functions/svc_roll_up_sms_usage.sql), so nothing here reads a message or a recipient.

/** Local days `from` to `to` (YYYY-MM-DD, both included) of the IANA zone `timeZone`. */
export interface UsageRange {
  from: string
  to: string
  timeZone: string
}

/** The report's `totals` object and `days` array, as JSON text in the route's response shapes. */
export interface UsageReportJson {
  totals: string
  days: string
}

// Each figure's JSON key and column, in the order the answer lists them. Constants of this file, never input: the
// SQL below is written from them.
const FIGURES = [
  ['messages', 'messages'],
  ['recipients', 'recipients'],
  ['sms', 'sms'],
  ['lms', 'lms'],
  ['segments', 'segments'],
  ['estimatedCost', 'estimated_cost'],
  ['delivered', 'delivered'],
  ['failed', 'failed'],
  ['optedOut', 'opted_out'],
  ['verificationCodes', 'verification_codes'],
  ['alimtalk', 'alimtalk'],
  ['fallbacks', 'fallbacks'],
  ['noConsent', 'no_consent'],
  ['consentNotices', 'consent_notices'],
] as const

const columns = sql.raw(FIGURES.map(([, column]) => column).join(', '))
// sum(bigint) answers numeric. Cast back to bigint (no count comes near its limit), the union's branches share one
// type, the sums over them stay cheap and each figure is printed by int8 output instead of numeric: about a fifth of
// the statement's time on a year of days.
const sums = sql.raw(FIGURES.map(([, column]) => `sum(${column})::bigint as ${column}`).join(', '))
// JSON objects written by hand: the keys are the constants above, the values dates and sums (integer text is a JSON
// number). concat costs a third of row_to_json here, and both are compact like the response's serialiser.
const dayJson = sql.raw(
  `concat('{"date":"', to_char(day, 'YYYY-MM-DD'), '"', ${FIGURES.map(([key, column]) => `',"${key}":', ${column}`).join(', ')}, '}')`,
)
const totalsJson = sql.raw(
  `concat('{', ${FIGURES.map(([key, column], index) => `'${index > 0 ? ',' : ''}"${key}":', coalesce(sum(${column}), 0)`).join(', ')}, '}')`,
)

/**
 * The tenant's usage per local day of the range (ascending, days without a counted message left out) and its
 * totals, in one statement, so in one snapshot: a roll-up committing meanwhile moves deltas from the journal to the
 * totals, or rebuilds the days, and the report sees all of it or none of it.
 * The totals come from sms_usage_days when they are of the report's zone (at most 366 rows), else from the
 * 15-minute buckets of sms_usage (exact in any zone: a bucket never straddles a local midnight, and the bounds are
 * local midnights computed by PostgreSQL), which only happens until the first roll-up after a zone change. Each
 * branch is guarded by an uncorrelated test of sms_usage_zones, which the planner runs once, before either, so the
 * other branch never executes. The pending deltas are added by local day in both cases.
 * Written as JSON by PostgreSQL: Node passes two strings through instead of parsing, renaming and serialising again
 * 366 x 13 values, most of the answer's CPU in the service.
 */
export async function usageReportJson(trx: TenantTx, tenantId: number, range: UsageRange): Promise<UsageReportJson> {
  const zone = sql`${range.timeZone}::text`
  const zoneReady = sql`(select 1 from sms_usage_zones where time_zone = ${zone})`
  const inRange = sql`bucket >= (${range.from}::date)::timestamp at time zone ${zone}
    and bucket < (${range.to}::date + 1)::timestamp at time zone ${zone}`
  const localDay = sql`(bucket at time zone ${zone})::date`
  const { rows } = await sql<UsageReportJson>`
    select ${totalsJson} as totals, '[' || coalesce(string_agg(${dayJson}, ',' order by day), '') || ']' as days
    from (
      select day, ${sums}
      from (
        select day, ${columns} from sms_usage_days
        where tenant_id = ${tenantId} and time_zone = ${zone} and day between ${range.from}::date and ${range.to}::date
          and exists ${zoneReady}
        union all
        select ${localDay}, ${sums} from sms_usage
        where tenant_id = ${tenantId} and ${inRange} and not exists ${zoneReady}
        group by 1
        union all
        select ${localDay}, ${sums} from sms_usage_changes where tenant_id = ${tenantId} and ${inRange}
        group by 1
      ) parts
      group by day
      -- Every other figure belongs to a counted message: a day whose messages were all cancelled had no activity.
      having sum(messages) <> 0
    ) days`.execute(trx)
  return rows[0]!
}

/**
 * How much one roll-up moves: `batch` deltas per statement (one transaction each, well inside the statement time
 * limit), at most `batches` statements. A minute's traffic journals far fewer; a backlog drains over a few minutes.
 */
export const ROLL_UP_LIMITS: BatchLimits = { batch: 10_000, batches: 50 }

/**
 * Moves the pending deltas into sms_usage and the local days of `timeZone` (SVC_TIME_ZONE) in sms_usage_days, across
 * tenants, first rebuilding the days when they are of another zone (db/functions/svc_roll_up_sms_usage.sql), a
 * batch per statement (ROLL_UP_LIMITS); returns how many deltas it moved. Reports read the journal too, so it
 * changes no report: it keeps the journal short and the report's reading to one row per day.
 */
export function rollUpSmsUsage(db: Kysely<DB>, timeZone: string, limits: BatchLimits = ROLL_UP_LIMITS): Promise<number> {
  return inBatches(limits, async (batch) => {
    const { rows } = await sql<{ moved: number }>`select svc_roll_up_sms_usage(${timeZone}::text, ${batch}::int) as moved`.execute(db)
    return rows[0]?.moved ?? 0
  })
}
