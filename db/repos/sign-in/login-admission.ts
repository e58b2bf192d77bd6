import { sql, type Kysely, type Selectable } from 'kysely'
import type { DB, LoginFailuresTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import { tenantFromPrefixedColumns, type TenantPrefixedColumns } from '../tenant-prefixed-columns.js'
import type { Tenant } from '../tenancy/tenants.js'

// login_failures, tenants and owner_directory hold no RLS rows, so the login's first statement runs on the root
// handle, before any tenant context exists; it binds the tenant it names itself to count a known user.

/** Failed logins of an id that names no user: per (customId, or `root` for root entry, and the id as presented). */
export type PresentedKey = Pick<Selectable<LoginFailuresTable>, 'scope' | 'loginId'>

/** Failed logins of a known user: one counter per user, whatever the entry or the route that checks the password. */
export interface UserKey {
  tenantId: number
  userId: number
}

/** Where an attempt was counted, and so where its failure is recorded. */
export type FailureKey = UserKey | PresentedKey

/** Which tenant the attempt names: portal entry by customId, root entry through the owner directory. */
export type LoginEntry = { customId: string } | { ownerLoginId: string }

export interface EnteredTenant {
  tenant: Tenant
  /** The user the attempt names (the owner the directory names, or the login id in the tenant); null when none. */
  userId: number | null
}

/** Admitted: the tenant the attempt names, or null when there is none (still one bcrypt comparison to go). */
export type LoginAdmission =
  | { admitted: true; entered: EnteredTenant | null; key: FailureKey }
  | { admitted: false; lockedUntil: Date | null }

/** An admission that names nothing but the counted attempt (a password change: the caller is known). */
export type Admission = { admitted: true } | { admitted: false; lockedUntil: Date | null }

// The tenant columns are all null when the attempt names no tenant.
type AdmissionRow = { admitted: boolean; lockedUntil: Date | null; userId: number | null } & (
  | TenantPrefixedColumns
  | { tenantId: null }
)

/**
 * Admits one login attempt before its password is checked, counting it as a failure until it proves otherwise
 * (the failures are forgiven once the password is proven). Counting first keeps simultaneous guesses from slipping
 * past the limit: while `maxFailures` attempts are failed or still unresolved, or the key is locked, no attempt is
 * admitted. Refused with `lockedUntil` null means busy: earlier attempts are still being checked and may yet
 * succeed. A known user is counted on the user's own key, whatever the entry; any other attempt on `presented`.
 *
 * The same call (svc_login_admit, one round trip) reads the tenant the attempt names; a refused attempt never
 * learns whether it exists, and an admitted one only after its bcrypt comparison.
 */
export async function admitLoginAttempt(
  db: Kysely<DB>,
  presented: PresentedKey,
  limits: { maxFailures: number; lockSeconds: number },
  entry: LoginEntry,
): Promise<LoginAdmission> {
  const customId = 'customId' in entry ? entry.customId : null
  const ownerLoginId = 'ownerLoginId' in entry ? entry.ownerLoginId : null
  const { rows } = await sql<AdmissionRow>`
    select * from svc_login_admit(${presented.scope}, ${presented.loginId}, ${limits.maxFailures}, ${limits.lockSeconds},
                                  ${customId}, ${ownerLoginId})`.execute(db)
  const row = rows[0]!
  if (!row.admitted) return refused(row.lockedUntil)
  if (row.tenantId === null) return { admitted: true, entered: null, key: presented }
  const tenant = tenantFromPrefixedColumns(row)
  const key = row.userId === null ? presented : { tenantId: tenant.id, userId: row.userId }
  return { admitted: true, entered: { tenant, userId: row.userId }, key }
}

/** The same admission for a known user, in a transaction bound to the user's tenant (svc_login_admit_user). */
export async function admitUserAttempt(
  trx: TenantTx,
  key: UserKey,
  limits: { maxFailures: number; lockSeconds: number },
): Promise<Admission> {
  const { rows } = await sql<{ admitted: boolean; lockedUntil: Date | null }>`
    select admitted, locked_until
    from svc_login_admit_user(${key.tenantId}, ${key.userId}, ${limits.maxFailures}, ${limits.lockSeconds})`.execute(trx)
  const row = rows[0]!
  return row.admitted ? { admitted: true } : refused(row.lockedUntil)
}

// The lock was read in the upsert's snapshot, which may predate a lock set meanwhile: then it is only busy.
function refused(lockedUntil: Date | null): { admitted: false; lockedUntil: Date | null } {
  return { admitted: false, lockedUntil: lockedUntil && lockedUntil > new Date() ? lockedUntil : null }
}
