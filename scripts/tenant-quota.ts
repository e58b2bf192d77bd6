import { openOwner } from '../db/open.js'
import { setTenantDailyQuota } from '../db/repos/tenancy/tenant-operations.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run -s tenant:quota -- SLUG N|default
 * Sets the tenant's own daily recipient quota (N recipients per local day, 0 unlimited) or puts it back to the
 * service's SVC_SMS_TENANT_DAILY_RECIPIENTS; prints {"slug", "dailyRecipientQuota"} (null: the default). The next send
 * on every instance applies it (docs/operations.md#scripts).
 */
const USAGE = 'usage: npm run -s tenant:quota -- SLUG N|default (N: recipients per local day, 0 = unlimited)'
const MAX_QUOTA = 1_000_000_000

function parseCommandLine(argv: string[]): { slug: string; quota: number | null } {
  const [slug, value, ...rest] = argv
  if (!slug || value === undefined || rest.length > 0) throw new UsageError(USAGE)
  if (value === 'default') return { slug, quota: null }
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) > MAX_QUOTA) {
    throw new UsageError(`the quota must be a whole number from 0 to ${MAX_QUOTA}, or default (got ${JSON.stringify(value)})\n${USAGE}`)
  }
  return { slug, quota: Number(value) }
}

await runScript(async () => {
  const args = parseCommandLine(process.argv.slice(2))
  loadDotEnv()
  const database = openOwner(loadEnv())
  try {
    const updated = await setTenantDailyQuota(database.db, args.slug, args.quota)
    if (!updated) throw new UsageError(`no tenant with slug ${JSON.stringify(args.slug)}`)
    return updated
  } finally {
    await database.close()
  }
})
