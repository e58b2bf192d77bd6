import { openOwner } from '../db/open.js'
import { setTenantStatus } from '../db/repos/tenancy/tenant-operations.js'
import type { TenantStatus } from '../db/schema.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run -s tenant:status -- SLUG ACTIVE|SUSPENDED|CLOSED
 * Changes a tenant's status; prints {"slug", "previousStatus", "status"}. Anything but ACTIVE takes effect with the
 * next request on every instance: its users' requests answer AUTH_010, and its messages not yet handed to the
 * provider stay PENDING (docs/operations.md#scripts).
 */
const STATUSES: readonly TenantStatus[] = ['ACTIVE', 'SUSPENDED', 'CLOSED']
const USAGE = `usage: npm run -s tenant:status -- SLUG ${STATUSES.join('|')}`

function parseCommandLine(argv: string[]): { slug: string; status: TenantStatus } {
  const [slug, value, ...rest] = argv
  if (!slug || value === undefined || rest.length > 0) throw new UsageError(USAGE)
  const status = value.toUpperCase()
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`the status must be one of ${STATUSES.join(', ')} (got ${JSON.stringify(value)})\n${USAGE}`)
  }
  return { slug, status: status as TenantStatus }
}

await runScript(async () => {
  const args = parseCommandLine(process.argv.slice(2))
  loadDotEnv()
  const database = openOwner(loadEnv())
  try {
    const changed = await setTenantStatus(database.db, args.slug, args.status)
    if (!changed) throw new UsageError(`no tenant with slug ${JSON.stringify(args.slug)}`)
    return changed
  } finally {
    await database.close()
  }
})
