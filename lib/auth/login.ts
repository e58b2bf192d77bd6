import { admitLoginAttempt, type EnteredTenant, type FailureKey, type LoginEntry } from '../../db/repos/login-admission.js'
import { clearLoginFailures, recordLoginFailure } from '../../db/repos/login-guards.js'
import { findCredentialsById, findCredentialsByLoginId } from '../../db/repos/users.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { openSession } from './open-session.js'
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from './password-hash.js'
import type { TokenPair } from './tokens.js'
import { toMinimalUser, type MinimalUser } from './user-response.js'

export interface LoginInput {
  userLoginId: string
  password: string
  customId?: string | undefined
}

// How long an attempt waits for earlier, still unresolved attempts of the same key before it gives up.
const ADMISSION_WAIT_MS = 2000

/**
 * Admits the attempt or throws AUTH_018; an admitted attempt gets the tenant it names (null when there is none).
 * When the key is only busy (the limit is taken up by attempts still being checked) it waits for them, so
 * simultaneous logins with the right password are not refused; guesses are, as soon as a failure among them starts
 * the lock.
 */
async function admit(deps: AuthDeps, key: FailureKey, entry: LoginEntry): Promise<EnteredTenant | null> {
  const { env } = deps
  const limits = { maxFailures: env.SVC_LOGIN_MAX_FAILURES, lockSeconds: env.SVC_LOGIN_LOCK_SECONDS }
  const deadline = Date.now() + ADMISSION_WAIT_MS
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const admission = await admitLoginAttempt(deps.db, key, limits, entry)
    if (admission.admitted) return admission.entered
    if (admission.lockedUntil || Date.now() + pause > deadline) {
      const retryAfter = admission.lockedUntil
        ? Math.max(1, Math.ceil((admission.lockedUntil.getTime() - Date.now()) / 1000))
        : 1
      throw new AppError('AUTH_018', undefined, { headers: { 'retry-after': String(retryAfter) } })
    }
    await new Promise((resolve) => setTimeout(resolve, pause))
  }
}

/**
 * Unknown tenant, unknown user and wrong password all answer AUTH_001 after one bcrypt comparison, so neither
 * the answer nor its timing tells them apart. Users are read only inside the tenant's context.
 */
export async function login(
  deps: AuthDeps,
  input: LoginInput,
  client: ClientInfo,
): Promise<{ tokens: TokenPair; user: MinimalUser }> {
  const { env } = deps
  // Exactly the id the lookup resolves (case-sensitive, unique in its scope), so no other account, a look-alike
  // included, can share this counter or reset it by signing in.
  const key: FailureKey = { scope: input.customId ?? 'root', loginId: input.userLoginId }
  const entry: LoginEntry = input.customId !== undefined ? { customId: input.customId } : { ownerLoginId: input.userLoginId }
  const entered = await admit(deps, key, entry)

  const credentials = entered
    ? await withTenant(deps.db, entered.tenant.id, (trx) =>
        entered.ownerUserId !== undefined
          ? findCredentialsById(trx, entered.ownerUserId)
          : findCredentialsByLoginId(trx, input.userLoginId),
      )
    : undefined
  const passwordMatches = credentials
    ? await verifyPassword(input.password, credentials.passwordHash)
    : await verifyAgainstDummy(input.password, env.SVC_BCRYPT_COST)
  if (!entered || !credentials || !passwordMatches) {
    await recordLoginFailure(deps.db, key.scope, key.loginId, env.SVC_LOGIN_MAX_FAILURES, env.SVC_LOGIN_LOCK_SECONDS)
    throw new AppError('AUTH_001')
  }

  // Status answers come only after the password proved who is asking. A proven password is no failure, and earlier
  // ones are forgiven: here, or in the session transaction's statement.
  const { tenant } = entered
  if (tenant.status !== 'ACTIVE' || credentials.status !== 'ACTIVE') {
    await clearLoginFailures(deps.db, key.scope, key.loginId)
    throw new AppError(tenant.status !== 'ACTIVE' ? 'AUTH_010' : 'AUTH_015')
  }

  // Hashing is slow: done before the transaction so no connection waits on it.
  const upgradedHash = needsRehash(credentials.passwordHash, env.SVC_BCRYPT_COST)
    ? await hashPassword(input.password, env.SVC_BCRYPT_COST)
    : null
  // The session transaction is one statement after its set_config; it commits even for a user no longer ACTIVE, so
  // that the forgiveness stays.
  const subject = { userId: credentials.id, tenantId: tenant.id, tenantSlug: tenant.slug }
  const tokens = await withTenant(deps.db, tenant.id, (trx) =>
    openSession(trx, deps, subject, client, { key, upgradedHash }),
  ).catch(async (error: unknown) => {
    // A rolled-back session transaction took the forgiveness with it; the password was still proven.
    await clearLoginFailures(deps.db, key.scope, key.loginId)
    throw error
  })
  if (!tokens) throw new AppError('AUTH_015')
  return { tokens, user: toMinimalUser(credentials, tenant) }
}
