import { sql, type Transaction } from 'kysely'
import type { DB } from '../../db/schema.js'
import { owner } from './fixtures.js'

/** A transaction of the owner's that holds locks until released, as a request still at work would. */
export interface LockHolder {
  /** Its server session, for `blockedBy`. */
  pid: number
  /** Ends the transaction (its locks go) and waits for it. */
  release(): Promise<void>
}

/** Opens an owner transaction, takes its locks with `lock`, and keeps them until `release`. */
export async function holdLocks(lock: (trx: Transaction<DB>) => Promise<unknown>): Promise<LockHolder> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: (pid: number) => void
  const isLocked = new Promise<number>((resolve) => (locked = resolve))
  const holder = owner()
    .transaction()
    .execute(async (trx) => {
      await lock(trx)
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)
      locked(rows[0]!.pid)
      await released
    })
  // A lock statement that fails ends the transaction before it holds anything.
  const pid = await Promise.race([isLocked, holder.then(() => Promise.reject(new Error('the lock holder ended before holding its locks')))])
  return { pid, release: () => (release(), holder) }
}

/** The server sessions waiting for a lock that session `pid` holds, with the statement each is running. */
export async function blockedBy(pid: number): Promise<{ pid: number; query: string }[]> {
  const { rows } = await sql<{ pid: number; query: string }>`
    select pid, query from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))`.execute(owner())
  return rows
}
