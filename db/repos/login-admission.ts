import { sql, type Kysely, type Selectable } from 'kysely'
import type { DB, LoginFailuresTable } from '../schema.js'
import { tenantFromPrefixedColumns, type TenantPrefixedColumns } from './tenant-prefixed-columns.js'
import type { Tenant } from './tenants.js'

// login_failures, tenants and owner_directory hold no RLS rows, so the login's first statement runs on the root
// handle, before any tenant context exists.

/** Failed logins are counted per (customId, or `root` for root entry, and the login id exactly as presented). */
export type FailureKey = Pick<Selectable<LoginFailuresTable>, 'scope' | 'loginId'>

/** Which tenant the attempt names: portal entry by customId, root entry through the owner directory. */
export type LoginEntry = { customId: string } | { ownerLoginId: string }

export interface EnteredTenant {
  tenant: Tenant
  /** Root entry only: the owner the directory names; portal entry looks the user up by login id. */
  ownerUserId?: number
}

/** Admitted: the tenant the attempt names, or null when there is none (still one bcrypt comparison to go). */
export type LoginAdmission =
  | { admitted: true; entered: EnteredTenant | null }
  | { admitted: false; lockedUntil: Date | null }

// The tenant columns are all null when the attempt names no tenant.
type AdmissionRow = { admitted: boolean; lockedUntil: Date | null; ownerUserId: number | null } & (
  | TenantPrefixedColumns
  | { tenantId: null }
)

/**
 * Admits one login attempt before its password is checked, counting it as a failure until it proves otherwise
 * (the failures are forgiven once the password is proven). Counting first keeps simultaneous guesses from slipping
 * past the limit: while `maxFailures` attempts are failed or still unresolved, or the key is locked, no attempt is
 * admitted. Refused with `lockedUntil` null means busy: earlier attempts are still being checked and may yet
 * succeed.
 *
 * The same call (svc_login_admit, one round trip) reads the tenant the attempt names; a refused attempt never
 * learns whether it exists, and an admitted one only after its bcrypt comparison.
 */
export async function admitLoginAttempt(
  db: Kysely<DB>,
  key: FailureKey,
  limits: { maxFailures: number; lockSeconds: number },
  entry: LoginEntry,
): Promise<LoginAdmission> {
  const customId = 'customId' in entry ? entry.customId : null
  const ownerLoginId = 'ownerLoginId' in entry ? entry.ownerLoginId : null
  const { rows } = await sql<AdmissionRow>`
    select * from svc_login_admit(${key.scope}, ${key.loginId}, ${limits.maxFailures}, ${limits.lockSeconds},
                                  ${customId}, ${ownerLoginId})`.execute(db)
  const row = rows[0]!
  if (!row.admitted) {
    // The lock was read in the upsert's snapshot, which may predate a lock set meanwhile: then it is only busy.
    return { admitted: false, lockedUntil: row.lockedUntil && row.lockedUntil > new Date() ? row.lockedUntil : null }
  }
  return { admitted: true, entered: enteredTenant(row) }
}

function enteredTenant(row: AdmissionRow): EnteredTenant | null {
  if (row.tenantId === null) return null
  const tenant = tenantFromPrefixedColumns(row)
  return row.ownerUserId === null ? { tenant } : { tenant, ownerUserId: row.ownerUserId }
}
