import type { Kysely } from 'kysely'
import { openOwner } from '../db/open.js'
import type { DB } from '../db/schema.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript, UsageError } from './run-script.js'

/**
 * An operations change to one tenant, `SLUG VALUE` on the command line: the value is read (`parseValue` throws a
 * UsageError naming what it takes) before any configuration or database, the change runs as the owner, and its
 * result, or the unknown slug, is printed by runScript (exit 0, or 1).
 */
export async function runTenantChange<Value, Result>(
  usage: string,
  parseValue: (value: string) => Value,
  change: (owner: Kysely<DB>, slug: string, value: Value) => Promise<Result | undefined>,
): Promise<void> {
  await runScript(async () => {
    const [slug, value, ...rest] = process.argv.slice(2)
    if (!slug || value === undefined || rest.length > 0) throw new UsageError(usage)
    const parsed = parseValue(value)
    loadDotEnv()
    const database = openOwner(loadEnv())
    try {
      const changed = await change(database.db, slug, parsed)
      if (!changed) throw new UsageError(`no tenant with slug ${JSON.stringify(slug)}`)
      return changed
    } finally {
      await database.close()
    }
  })
}
