import { setTenantStatus } from '../db/repos/tenancy/tenant-operations.js'
import type { TenantStatus } from '../db/schema.js'
import { UsageError } from './run-script.js'
import { runTenantChange } from './run-tenant-change.js'

/**
 * npm run -s tenant:status -- SLUG ACTIVE|SUSPENDED|CLOSED
 * Changes a tenant's status; prints {"slug", "previousStatus", "status"}. Anything but ACTIVE takes effect with the
 * next request on every instance: its users' requests answer AUTH_010, and its messages not yet handed to the
 * provider stay PENDING (docs/operations.md#scripts).
 */
const STATUSES: readonly TenantStatus[] = ['ACTIVE', 'SUSPENDED', 'CLOSED']
const USAGE = `usage: npm run -s tenant:status -- SLUG ${STATUSES.join('|')}`

function parseStatus(value: string): TenantStatus {
  const status = value.toUpperCase()
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`the status must be one of ${STATUSES.join(', ')} (got ${JSON.stringify(value)})\n${USAGE}`)
  }
  return status as TenantStatus
}

await runTenantChange(USAGE, parseStatus, setTenantStatus)
