import { admitLoginAttempt, type LoginEntry, type PresentedKey } from '../../db/repos/sign-in/login-admission.js'
import { findCredentialsById, findCredentialsByLoginId } from '../../db/repos/tenancy/users.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { recordAuditEvent } from '../audit/record.js'
import { AppError } from '../errors.js'
import { loginFailed, loginSucceeded } from './account-events.js'
import { clientOrigin } from './client-info.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { awaitAdmission, forgiveFailures, lockoutLimits, recordFailure } from './lockout.js'
import { openSession } from './open-session.js'
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from './password-hash.js'
import type { TokenPair } from './tokens.js'
import { toMinimalUser, type MinimalUser } from './user-response.js'
import { startSecondStep, type PendingSecondStep } from './login-second-step.js'

/** A login's answer: a session, or, for a user with a second factor, the second step to come. */
export type LoginOutcome = { tokens: TokenPair; user: MinimalUser } | { secondStep: PendingSecondStep }

export interface LoginInput {
  userLoginId: string
  password: string
  customId?: string | undefined
}

/**
 * Unknown tenant, unknown user and wrong password all answer AUTH_001 after one bcrypt comparison, so neither
 * the answer nor its timing tells them apart. Users are read only inside the tenant's context.
 *
 * Audited in the transactions that make the changes: LOGIN_FAILED of a known user with the failure's count (and
 * LOGIN_LOCKED when it starts the lock) or with the forgiveness of a refused status, LOGIN_SUCCEEDED with the
 * session. An attempt that names no user of a known tenant writes nothing: there is no one to log it for.
 */
export async function login(deps: AuthDeps, input: LoginInput, client: ClientInfo): Promise<LoginOutcome> {
  const { env } = deps
  // A known user is counted on the user's own key, whatever the entry (the admission finds the user). An attempt
  // that names no user is counted on the id exactly as presented: the id the lookup resolves (case-sensitive,
  // unique in its scope), so no other account, a look-alike included, can share that counter or reset it.
  const presented: PresentedKey = { scope: input.customId ?? 'root', loginId: input.userLoginId }
  const entry: LoginEntry = input.customId !== undefined ? { customId: input.customId } : { ownerLoginId: input.userLoginId }
  const { entered, key } = await awaitAdmission(() => admitLoginAttempt(deps.db, presented, lockoutLimits(env), entry))
  // Nobody is signed in until the session opens: a failure has no actor.
  const anonymous = clientOrigin(client, null)

  // A known tenant is read from even when it has no such user, so the answer takes as long either way.
  const credentials = entered
    ? await withTenant(deps.db, entered.tenant.id, (trx) =>
        entered.userId !== null ? findCredentialsById(trx, entered.userId) : findCredentialsByLoginId(trx, input.userLoginId),
      )
    : undefined
  const passwordMatches = credentials
    ? await verifyPassword(input.password, credentials.passwordHash)
    : await verifyAgainstDummy(input.password, env.SVC_BCRYPT_COST)
  if (!entered || !credentials || !passwordMatches) {
    await recordFailure(deps.db, key, env, { origin: anonymous, reason: 'WRONG_PASSWORD' })
    throw new AppError('AUTH_001')
  }

  // Status answers come only after the password proved who is asking. A proven password is no failure, and earlier
  // ones are forgiven: here, or in the session transaction's statement.
  const { tenant } = entered
  const userKey = { tenantId: tenant.id, userId: credentials.id }
  if (tenant.status !== 'ACTIVE' || credentials.status !== 'ACTIVE') {
    const tenantActive = tenant.status === 'ACTIVE'
    await forgiveFailures(deps.db, userKey, {
      origin: anonymous,
      reason: tenantActive ? 'USER_NOT_ACTIVE' : 'TENANT_NOT_ACTIVE',
    })
    throw new AppError(tenantActive ? 'AUTH_015' : 'AUTH_010')
  }

  // A user with a second factor gets no session yet: the second step (lib/sign-in/login-second-step.ts) opens it. The
  // password is no failure, but earlier failures (guessed codes among them) are not forgiven until that step.
  if (credentials.secondFactor) {
    return { secondStep: await startSecondStep(deps, userKey, credentials.phoneVerifiedAt !== null) }
  }

  // Hashing is slow: done before the transaction so no connection waits on it.
  const upgradedHash = needsRehash(credentials.passwordHash, env.SVC_BCRYPT_COST)
    ? await hashPassword(input.password, env.SVC_BCRYPT_COST)
    : null
  // The session transaction is one statement after its set_config, then its audit event; it commits even for a user
  // no longer ACTIVE, so that the forgiveness stays (and the refusal is logged).
  const subject = { userId: credentials.id, tenantId: tenant.id, tenantSlug: tenant.slug }
  const session = await withTenant(deps.db, tenant.id, async (trx) => {
    const opened = await openSession(trx, deps, subject, client, { upgradedHash })
    const event = opened
      ? loginSucceeded(credentials.id, { sid: opened.sid, deviceCategory: client.deviceCategory }, 'password')
      : loginFailed(credentials.id, 'USER_NOT_ACTIVE')
    await recordAuditEvent(trx, tenant.id, opened ? clientOrigin(client, credentials.id) : anonymous, event)
    return opened
  }).catch(async (error: unknown) => {
    // A rolled-back session transaction took the forgiveness with it; the password was still proven.
    await forgiveFailures(deps.db, userKey)
    throw error
  })
  if (!session) throw new AppError('AUTH_015')
  return { tokens: session.tokens, user: toMinimalUser(credentials, tenant) }
}
