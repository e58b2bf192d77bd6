import { setTenantDailyQuota } from '../db/repos/tenancy/tenant-operations.js'
import { UsageError } from './run-script.js'
import { runTenantChange } from './run-tenant-change.js'

/**
 * npm run -s tenant:quota -- SLUG N|default
 * Sets the tenant's own daily recipient quota (N recipients per local day, 0 unlimited) or puts it back to the
 * service's SVC_SMS_TENANT_DAILY_RECIPIENTS; prints {"slug", "dailyRecipientQuota"} (null: the default). The next send
 * on every instance applies it (docs/operations.md#scripts).
 */
const USAGE = 'usage: npm run -s tenant:quota -- SLUG N|default (N: recipients per local day, 0 = unlimited)'
const MAX_QUOTA = 1_000_000_000

function parseQuota(value: string): number | null {
  if (value === 'default') return null
  if (!/^[0-9]{1,10}$/.test(value) || Number(value) > MAX_QUOTA) {
    throw new UsageError(`the quota must be a whole number from 0 to ${MAX_QUOTA}, or default (got ${JSON.stringify(value)})\n${USAGE}`)
  }
  return Number(value)
}

await runTenantChange(USAGE, parseQuota, setTenantDailyQuota)
