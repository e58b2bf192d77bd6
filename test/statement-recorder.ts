import pg from 'pg'
import { vi } from 'vitest'

export interface RecordedQuery {
  text: string
  values: unknown[]
}

/**
 * The SQL statements the pg driver sends while `work` runs, with their values, without connection set-up
 * (`set role`). Only the PostgreSQL store has a pg driver to observe: use it in `itPostgres` tests.
 */
export async function recordQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: RecordedQuery[] }> {
  const queries: RecordedQuery[] = []
  const query = pg.Client.prototype.query
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string; values?: unknown[] }
    queries.push(
      typeof first === 'string'
        ? { text: first, values: Array.isArray(args[1]) ? args[1] : [] }
        : { text: first.text, values: first.values ?? [] },
    )
    return (query as (...forwarded: unknown[]) => unknown).apply(this, args)
  } as typeof query)
  try {
    const result = await work()
    return { result, queries: queries.filter((recorded) => !/^set role /i.test(recorded.text)) }
  } finally {
    spy.mockRestore()
  }
}

/** The SQL texts of `recordQueries`. */
export async function recordStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { result, queries } = await recordQueries(work)
  return { result, statements: queries.map((recorded) => recorded.text) }
}
