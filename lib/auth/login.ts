import { admitLoginAttempt, clearLoginFailures, recordLoginFailure } from '../../db/repos/login-guards.js'
import { findOwnerEntry, findTenantByCustomId, findTenantById, type Tenant } from '../../db/repos/tenants.js'
import { findCredentialsById, findCredentialsByLoginId, lockUser, updatePasswordHash } from '../../db/repos/users.js'
import { withTenant } from '../../db/tenant.js'
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

/** Portal entry (customId) finds the tenant directly; root entry goes through the owner directory. */
async function resolveTenant(deps: AuthDeps, input: LoginInput): Promise<{ tenant: Tenant; ownerUserId?: number } | null> {
  if (input.customId !== undefined) {
    const tenant = await findTenantByCustomId(deps.db, input.customId)
    return tenant ? { tenant } : null
  }
  const entry = await findOwnerEntry(deps.db, input.userLoginId)
  if (!entry) return null
  const tenant = await findTenantById(deps.db, entry.tenantId)
  return tenant ? { tenant, ownerUserId: entry.userId } : null
}

// How long an attempt waits for earlier, still unresolved attempts of the same key before it gives up.
const ADMISSION_WAIT_MS = 2000

/**
 * Admits the attempt or throws AUTH_018. When the key is only busy (the limit is taken up by attempts still being
 * checked) it waits for them, so simultaneous logins with the right password are not refused; guesses are, as soon
 * as a failure among them starts the lock.
 */
async function admit(deps: AuthDeps, scope: string, lockKey: string): Promise<void> {
  const { env } = deps
  const deadline = Date.now() + ADMISSION_WAIT_MS
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const admission = await admitLoginAttempt(deps.db, scope, lockKey, env.SVC_LOGIN_MAX_FAILURES, env.SVC_LOGIN_LOCK_SECONDS)
    if (admission.admitted) return
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
  const scope = input.customId ?? 'root'
  const lockKey = input.userLoginId.toLowerCase()
  await admit(deps, scope, lockKey)

  const resolved = await resolveTenant(deps, input)
  const credentials = resolved
    ? await withTenant(deps.db, resolved.tenant.id, (trx) =>
        resolved.ownerUserId !== undefined
          ? findCredentialsById(trx, resolved.ownerUserId)
          : findCredentialsByLoginId(trx, input.userLoginId),
      )
    : undefined
  const passwordMatches = credentials
    ? await verifyPassword(input.password, credentials.passwordHash)
    : await verifyAgainstDummy(input.password, env.SVC_BCRYPT_COST)
  if (!resolved || !credentials || !passwordMatches) {
    await recordLoginFailure(deps.db, scope, lockKey, env.SVC_LOGIN_MAX_FAILURES, env.SVC_LOGIN_LOCK_SECONDS)
    throw new AppError('AUTH_001')
  }
  // The password is proven: the attempt was no failure, and earlier ones are forgiven.
  await clearLoginFailures(deps.db, scope, lockKey)

  // Status answers come only after the password proved who is asking.
  const { tenant } = resolved
  if (tenant.status !== 'ACTIVE') throw new AppError('AUTH_010')
  if (credentials.status !== 'ACTIVE') throw new AppError('AUTH_015')

  // Hashing is slow: done before the transaction so no connection waits on it.
  const upgradedHash = needsRehash(credentials.passwordHash, env.SVC_BCRYPT_COST)
    ? await hashPassword(input.password, env.SVC_BCRYPT_COST)
    : null
  const tokens = await withTenant(deps.db, tenant.id, async (trx) => {
    const user = await lockUser(trx, credentials.id)
    if (!user || user.status !== 'ACTIVE') throw new AppError('AUTH_015')
    if (upgradedHash) await updatePasswordHash(trx, user.id, upgradedHash)
    return openSession(trx, deps, { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug, role: user.role }, client)
  })
  return { tokens, user: toMinimalUser(credentials, tenant) }
}
