/**
 * Removing one month of SMS history two ways on the same database: detached and dropped as partitions
 * (dropRangesPastRetention, what the maintenance job does) and deleted row by row in one transaction (what an
 * operator without partitions would run). For each: wall time, WAL written, and what it cost another client: a
 * writer that sends a one-recipient message and reads the history page, over and over, through the service, while a
 * sampler watches pg_locks for any connection but the remover's waiting on a lock.
 */
import { randomUUID } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import pg from 'pg'
import { kyselyOver } from '../../db/database.js'
import { dropRangesPastRetention } from '../../db/repos/sms/sms-retention.js'
import type { DB } from '../../db/schema.js'
import { log, median, quiet } from './load.js'
import { timeRequest } from './request-loop.js'
import { bearer } from './scenario-helpers.js'

/** The writer's pace is its own: it waits for each answer, so a blocked statement shows as one long request. */
const WRITER_ALONE_MS = 5000
const LOCK_SAMPLE_MS = 50

export interface WriterTarget {
  url: string
  access: string
  historyPath: string
}

export interface RemovalFigures {
  method: string
  messages: number
  seconds: number
  walBytes: number
  /** WAL the whole server wrote per second while the writer ran alone just before (the writer, other databases). */
  walBytesPerSecondBefore: number
  writerRequests: number
  writerP50Before: number
  writerP50During: number
  writerMaxDuring: number
  writerFailures: number
  /** The longest lock wait seen by sampling (another connection, this database), and on what. */
  longestLockWaitMs: number
  lockWaitOn: string
}

interface WriterSample {
  startedAt: number
  endedAt: number
  ms: number
}

/** Sends and history reads, one after the other, until stopped; each request's start, end and latency. */
function startWriter(target: WriterTarget): { samples: WriterSample[]; failures: () => number; stop: () => Promise<void> } {
  const samples: WriterSample[] = []
  let failures = 0
  let running = true
  let sends = 0
  const loop = (async () => {
    while (running) {
      const digits = String(20_000_000 + (sends++ % 10_000_000))
      const send = {
        method: 'POST' as const,
        path: '/v1/sms/send',
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...bearer(target.access) },
        body: JSON.stringify({
          title: 'Writer',
          content: 'Hello {name}',
          recipients: [{ phone: `010-${digits.slice(0, 4)}-${digits.slice(4)}`, name: 'Kim' }],
        }),
      }
      for (const request of [send, { method: 'GET' as const, path: target.historyPath, headers: bearer(target.access) }]) {
        const startedAt = performance.now()
        const { ms, ok, status } = await timeRequest(target.url, request)
        samples.push({ startedAt, endedAt: startedAt + ms, ms })
        if (!ok) {
          failures++
          if (failures <= 3) log(`  writer: ${request.method} ${request.path} answered ${status}`)
        }
      }
    }
  })()
  return {
    samples,
    failures: () => failures,
    stop: async () => {
      running = false
      await loop
    },
  }
}

/** The longest wait for a lock of any connection to this database but `exceptPid`, sampled until stopped. */
function startLockSampler(client: pg.Client, exceptPid: number): { stop: () => Promise<{ ms: number; on: string }> } {
  let longest = { ms: 0, on: 'none seen' }
  let running = true
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ ms: number; on: string }>(
        `select extract(epoch from clock_timestamp() - l.waitstart) * 1000 as ms,
                l.mode || ' on ' || coalesce(l.relation::regclass::text, l.locktype) || ' by "' || left(a.query, 70) || '"' as on
         from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where not l.granted and l.waitstart is not null and a.datname = current_database() and l.pid <> $1
         order by 1 desc limit 1`,
        [exceptPid],
      )
      const seen = rows[0]
      if (seen && Number(seen.ms) > longest.ms) longest = { ms: Number(seen.ms), on: seen.on }
      await new Promise((resolve) => setTimeout(resolve, LOCK_SAMPLE_MS))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return longest
    },
  }
}

async function walLsn(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')
  return rows[0]!.lsn
}

async function walBetween(client: pg.Client, from: string, to: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>('select pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) as bytes', [from, to])
  return Number(rows[0]!.bytes)
}

/**
 * Retention in days that puts exactly the range `suffix` past retention: the range opened after it was opened that
 * many whole days ago, the one after that later (svc_sms_ranges_past_retention). Throws when the registry says
 * otherwise, so a figure never describes the removal of another month.
 */
export async function daysDropping(owner: Kysely<DB>, suffix: string): Promise<number> {
  const { rows } = await sql<{ days: number }>`
    select floor(extract(epoch from now() - later.opened_at) / 86400)::int as days
    from sms_id_ranges r join lateral (
      select opened_at from sms_id_ranges l where l.first_id > r.first_id order by l.first_id limit 1) later on true
    where r.suffix = ${suffix}`.execute(owner)
  const days = rows[0]?.days
  if (days === undefined) throw new Error(`no range ${suffix} followed by another in sms_id_ranges`)
  const { rows: past } = await sql<{ suffix: string }>`select svc_sms_ranges_past_retention(${days}::int) as suffix`.execute(owner)
  const suffixes = past.map((row) => row.suffix)
  if (suffixes.length !== 1 || suffixes[0] !== suffix) throw new Error(`${days} days puts ${JSON.stringify(suffixes)} past retention, not [${suffix}]`)
  return days
}

interface Remover {
  db: Kysely<DB>
  pid: number
  close: () => Promise<void>
}

/** One owner connection kept open (no idle timeout), so the sampler can leave out its own waits by pid. */
async function openRemover(databaseUrl: string): Promise<Remover> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, idleTimeoutMillis: 0 })
  const db = kyselyOver(pool)
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)
  return { db, pid: rows[0]!.pid, close: () => db.destroy() }
}

/** Runs `remove` on its own connection, the writer and the lock sampler around it; returns the figures. */
async function measureRemoval(
  databaseUrl: string,
  writerTarget: WriterTarget,
  method: string,
  remove: (remover: Kysely<DB>) => Promise<number>,
): Promise<RemovalFigures> {
  await quiet()
  const remover = await openRemover(databaseUrl)
  const watcher = new pg.Client({ connectionString: databaseUrl })
  await watcher.connect()
  try {
    const writer = startWriter(writerTarget)
    const aloneFrom = await walLsn(watcher)
    const aloneStarted = performance.now()
    await new Promise((resolve) => setTimeout(resolve, WRITER_ALONE_MS))
    const from = await walLsn(watcher)
    const walBytesPerSecondBefore = (await walBetween(watcher, aloneFrom, from)) / ((performance.now() - aloneStarted) / 1000)
    const sampler = startLockSampler(watcher, remover.pid)
    const started = performance.now()
    const messages = await remove(remover.db)
    const ended = performance.now()
    const lock = await sampler.stop()
    const to = await walLsn(watcher)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await writer.stop()
    const before = writer.samples.filter((s) => s.endedAt < started)
    const during = writer.samples.filter((s) => s.endedAt >= started && s.startedAt <= ended)
    const figures: RemovalFigures = {
      method,
      messages,
      seconds: (ended - started) / 1000,
      walBytes: await walBetween(watcher, from, to),
      walBytesPerSecondBefore,
      writerRequests: during.length,
      writerP50Before: median(before.map((s) => s.ms)),
      writerP50During: median(during.map((s) => s.ms)),
      writerMaxDuring: Math.max(0, ...during.map((s) => s.ms)),
      writerFailures: writer.failures(),
      longestLockWaitMs: lock.ms,
      lockWaitOn: lock.on,
    }
    log(`  ${method}: ${JSON.stringify(figures)}`)
    return figures
  } finally {
    await watcher.end()
    await remover.close()
  }
}

/** The month `suffix` detached concurrently and dropped, as the maintenance job does with `days` of retention. */
export async function dropMonth(databaseUrl: string, owner: Kysely<DB>, writer: WriterTarget, suffix: string): Promise<RemovalFigures> {
  const days = await daysDropping(owner, suffix)
  return measureRemoval(databaseUrl, writer, `DETACH CONCURRENTLY + DROP (${suffix}, retention ${days} days)`, async (remover) => {
    const dropped = await dropRangesPastRetention(remover, days, true)
    if (dropped.length !== 1 || dropped[0]!.suffix !== suffix) throw new Error(`dropped ${JSON.stringify(dropped)}, expected only ${suffix}`)
    return dropped[0]!.messages
  })
}

/** The month starting `month` (yyyy-mm-dd) deleted row by row, recipients then messages, in one transaction. */
export function deleteMonth(databaseUrl: string, writer: WriterTarget, month: string): Promise<RemovalFigures> {
  return measureRemoval(databaseUrl, writer, `DELETE in one transaction (${month.slice(0, 7)})`, async (remover) =>
    remover.transaction().execute(async (trx) => {
      const from = sql`svc_sms_range_start(${month}::date)`
      const to = sql`svc_sms_range_start((${month}::date + interval '1 month')::date)`
      await sql`delete from sms_recipients where sms_id >= ${from} and sms_id < ${to}`.execute(trx)
      const result = await sql`delete from sms_messages where id >= ${from} and id < ${to}`.execute(trx)
      return Number(result.numAffectedRows ?? 0)
    }),
  )
}

/**
 * Drops the empty legacy range (ids of before the partitioning), which every retention puts past: afterwards a
 * measured drop removes one month and nothing else.
 */
export async function dropLegacyRange(owner: Kysely<DB>): Promise<void> {
  const dropped = await dropRangesPastRetention(owner, await daysDropping(owner, 'legacy'), true)
  if (dropped.length !== 1 || dropped[0]!.messages !== 0) throw new Error(`dropping the legacy range dropped ${JSON.stringify(dropped)}`)
}
