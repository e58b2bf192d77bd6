import pg from 'pg'
import { vi } from 'vitest'

/**
 * The SQL statements the pg driver sends while `work` runs, without connection set-up (`set role`). Only the
 * PostgreSQL store has a pg driver to observe: use it in `itPostgres` tests.
 */
export async function recordStatements<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = []
  const query = pg.Client.prototype.query
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string }
    statements.push(typeof first === 'string' ? first : first.text)
    return (query as (...forwarded: unknown[]) => unknown).apply(this, args)
  } as typeof query)
  try {
    const result = await work()
    return { result, statements: statements.filter((statement) => !/^set role /i.test(statement)) }
  } finally {
    spy.mockRestore()
  }
}
