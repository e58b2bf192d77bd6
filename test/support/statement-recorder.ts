import pg from 'pg'
import { vi } from 'vitest'
import { SyncedBatch } from '../../db/driver/synced-batch.js'

export interface RecordedQuery {
  text: string
  values: unknown[]
  /** The prepared statement's name, when the client sent one. */
  name?: string
}

/**
 * How every runtime transaction opens (db/tenant-transaction.ts): `begin` (`begin read only` for a GET), then the role
 * and the statement timeout set inside it, never on the connection. The pipelined driver writes them in one batch
 * with what follows; the plain driver sends each in a round trip of its own.
 */
export const RUNTIME_BEGIN = /^begin( read only)?$/
export const RUNTIME_ROLE = 'set local role "svc_app"'
export const RUNTIME_TIMEOUT = /^set local statement_timeout = \d+$/

/** What one call of pg's `query()` sends: its statement, or every statement of a SyncedBatch (db/driver/synced-batch.ts). */
export function statementsOf(args: unknown[]): RecordedQuery[] {
  const first = args[0] as string | SyncedBatch | { text: string; values?: unknown[]; name?: string }
  if (first instanceof SyncedBatch) {
    return first.statements.map(({ text, values, name }) => ({ text, values, ...(name ? { name } : {}) }))
  }
  if (typeof first === 'string') return [{ text: first, values: Array.isArray(args[1]) ? args[1] : [] }]
  return [{ text: first.text, values: first.values ?? [], ...(first.name ? { name: first.name } : {}) }]
}

/**
 * The once-a-minute purge (plugins/platform/maintenance.ts) runs in every app of the worker, so it may land in the middle of
 * a test that counts statements; it is no part of the work under test.
 */
export function isMaintenanceStatement(text: string): boolean {
  return /svc_purge_expired\(|svc_purge_old_sms\(|^delete from "used_internal_signatures"/.test(text)
}

/**
 * Drops the purge's statements, with the opening statements and the commit of the transaction the runtime pool runs
 * a lone statement in: those of the same connection, which the plain driver sends one by one, maybe between a test's.
 */
function withoutMaintenance(sent: Array<{ client: pg.Client; query: RecordedQuery }>): RecordedQuery[] {
  const dropped = new Set<number>()
  sent.forEach(({ client, query }, index) => {
    if (!isMaintenanceStatement(query.text)) return
    dropped.add(index)
    const earlier = sent.map((entry, at) => ({ ...entry, at })).filter((entry) => entry.client === client && entry.at < index)
    for (const opening of [RUNTIME_TIMEOUT, RUNTIME_ROLE, RUNTIME_BEGIN]) {
      const previous = earlier.pop()
      if (!previous || !(typeof opening === 'string' ? previous.query.text === opening : opening.test(previous.query.text))) break
      dropped.add(previous.at)
    }
    const next = sent.findIndex((entry, at) => at > index && entry.client === client)
    if (next >= 0 && sent[next]!.query.text === 'commit') dropped.add(next)
  })
  return sent.filter((_, index) => !dropped.has(index)).map(({ query }) => query)
}

/** Runs `work` and tells `seen` of every call of pg's own `query()` meanwhile (the client and what it wrote). */
async function watchingQueries<T>(seen: (client: pg.Client, args: unknown[]) => void, work: () => Promise<T>): Promise<T> {
  const query = pg.Client.prototype.query
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    seen(this, args)
    return (query as (...forwarded: unknown[]) => unknown).apply(this, args)
  } as typeof query)
  try {
    return await work()
  } finally {
    spy.mockRestore()
  }
}

/**
 * The SQL statements the pg driver sends while `work` runs, with their values. Only the PostgreSQL store has a pg
 * driver to observe: use it in `itPostgres` tests.
 */
export async function recordQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: RecordedQuery[] }> {
  const sent: Array<{ client: pg.Client; query: RecordedQuery }> = []
  const result = await watchingQueries((client, args) => sent.push(...statementsOf(args).map((query) => ({ client, query }))), work)
  return { result, queries: withoutMaintenance(sent) }
}

/**
 * The exchanges with the server while `work` runs: one entry per call of pg's own `query()`, each what that call
 * wrote (a SyncedBatch is one exchange of several statements). The purge's exchanges are left out.
 */
export async function recordExchanges(work: () => Promise<unknown>): Promise<string[][]> {
  const exchanges: string[][] = []
  await watchingQueries((_client, args) => exchanges.push(statementsOf(args).map((recorded) => recorded.text)), work)
  return exchanges.filter((texts) => !texts.some(isMaintenanceStatement))
}

/** The SQL texts of `recordQueries`. */
export async function recordStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, queries } = await recordQueries(work)
  return { result, statements: queries.map((recorded) => recorded.text) }
}

/**
 * The pg connection that sends the next statement (call the returned function after `work` to get it), so a test
 * can then ask the server session itself with `sessionQuery`.
 */
export async function connectionOf(work: () => Promise<unknown>): Promise<pg.Client> {
  let captured: pg.Client | undefined
  await watchingQueries((client) => {
    captured ??= client
  }, work)
  if (!captured) throw new Error('no statement was sent')
  return captured
}

/** A plain pg query on `client`, past the service client (no transaction, no role switch): the session's own view. */
export function sessionQuery(client: pg.Client, text: string): Promise<pg.QueryResult> {
  return (pg.Client.prototype.query as (text: string) => Promise<pg.QueryResult>).call(client, text)
}
