import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'
import { inBatches, type BatchLimits } from '../in-batches.js'

// SMS retention and partition upkeep (docs/architecture.md#data-lifecycle). sms_messages and sms_recipients are
// partitioned by message id, a range of ids a month (db/migrations/2026-11-28T03-00-00-sms-id-ranges.ts): whole
// months past retention are detached and dropped, the rest of what is past retention is deleted a batch at a time.

/** Months of ranges created ahead of the current one: a stopped upkeep has this long before ranges stop changing. */
export const MONTHS_AHEAD = 2

const PARTITIONED = ['sms_messages', 'sms_recipients'] as const

/** Creates this month's range and MONTHS_AHEAD more where missing and opens this month's; returns ranges created. */
export async function prepareRanges(owner: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ created: number }>`select svc_prepare_sms_partitions(${MONTHS_AHEAD}::int) as created`.execute(owner)
  return rows[0]?.created ?? 0
}

/** One month dropped: its suffix (`p202511`, `legacy`) and the messages it held. */
export interface DroppedRange {
  suffix: string
  messages: number
}

/**
 * Detaches and drops every range wholly past `retentionDays`, oldest first. `concurrently` (PostgreSQL) detaches
 * with DETACH ... CONCURRENTLY, which waits for the transactions using the partition instead of locking out every
 * new one: a send or a dispatch never waits on it. It runs outside a transaction, so a detach cut short is finished
 * (FINALIZE) by the next run. Only one instance works at a time (a session advisory lock; the others skip).
 */
export async function dropRangesPastRetention(
  owner: Kysely<DB>,
  retentionDays: number,
  concurrently: boolean,
): Promise<DroppedRange[]> {
  if (retentionDays <= 0) return []
  return owner.connection().execute(async (connection) => {
    const { rows: locked } = await sql<{ locked: boolean }>`
      select pg_try_advisory_lock(hashtext('svc_drop_sms_ranges')) as locked`.execute(connection)
    if (!locked[0]?.locked) return []
    try {
      const { rows: ranges } = await sql<{ suffix: string }>`
        select suffix from svc_sms_ranges_past_retention(${retentionDays}::int) as suffix`.execute(connection)
      const dropped: DroppedRange[] = []
      for (const { suffix } of ranges) {
        for (const parent of PARTITIONED) await detach(connection, parent, `${parent}_${suffix}`, concurrently)
        const { rows } = await sql<{ messages: string }>`select svc_forget_sms_range(${suffix}) as messages`.execute(connection)
        dropped.push({ suffix, messages: Number(rows[0]?.messages ?? 0) })
      }
      return dropped
    } finally {
      await sql`select pg_advisory_unlock(hashtext('svc_drop_sms_ranges'))`.execute(connection)
    }
  })
}

async function detach(connection: Kysely<DB>, parent: string, partition: string, concurrently: boolean): Promise<void> {
  const { rows } = await sql<{ pending: boolean }>`
    select i.inhdetachpending as pending from pg_inherits i where i.inhrelid = to_regclass(${partition})`.execute(connection)
  const state = rows[0]
  if (state === undefined) return
  const mode = state.pending ? sql`finalize` : concurrently ? sql`concurrently` : sql``
  await sql`alter table ${sql.id(parent)} detach partition ${sql.id(partition)} ${mode}`.execute(connection)
}

/**
 * Deletes what is past the stored SMS retention (db/repos/audit/retention-settings.ts; the function reads it, the caller
 * cannot choose it) and was not dropped with its month, in batches of messages (with their recipients); returns the
 * messages deleted.
 */
export function purgeOldMessages(db: Kysely<DB>, limits: BatchLimits): Promise<number> {
  return inBatches(limits, async (batch) => {
    const { rows } = await sql<{ purged: number }>`select svc_purge_old_sms(${batch}::int) as purged`.execute(db)
    return rows[0]?.purged ?? 0
  })
}
