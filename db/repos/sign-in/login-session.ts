import { sql } from 'kysely'
import type { Role, UserStatus } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import type { NewSession } from './sessions.js'

export interface LoginSessionResult {
  /** The locked user's role and status; null when the user is gone. Nothing was stored unless ACTIVE. */
  userRole: Role | null
  userStatus: UserStatus | null
}

/**
 * A sign-in's session writes in one round trip (svc_login_open_session): locks the user, forgives the user's failed
 * logins when `forgiveFailures` (a login's password is proven; a registration has none to forgive), and for an
 * ACTIVE user stores `upgradedHash` if given and replaces the session of the same device category with `session`.
 * The forgiveness lasts only if the transaction commits, so a login commits whatever the status.
 */
export async function openLoginSession(
  trx: TenantTx,
  forgiveFailures: boolean,
  upgradedHash: string | null,
  session: Omit<NewSession, 'tenantId'>,
): Promise<LoginSessionResult> {
  const { rows } = await sql<LoginSessionResult>`
    select user_role, user_status from svc_login_open_session(
      ${session.userId}, ${forgiveFailures}, ${upgradedHash}, ${session.sid},
      ${session.deviceCategory}, ${session.userAgent}, ${session.ipAddress}, ${session.accessJti},
      ${session.accessExpiresAt}, ${session.refreshJti}, ${session.refreshExpiresAt})`.execute(trx)
  return rows[0]!
}
