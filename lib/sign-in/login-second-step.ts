import { admitUserAttempt, type UserKey } from '../../db/repos/sign-in/login-admission.js'
import { clearUserLoginFailures, recordUserLoginFailure, settleUserAttempt } from '../../db/repos/sign-in/login-guards.js'
import { deleteMfaChallenge, findMfaChallenge, insertMfaChallenge } from '../../db/repos/account-security/mfa-challenges.js'
import { findTenantById, type Tenant } from '../../db/repos/tenancy/tenants.js'
import { findUserById, type UserRecord } from '../../db/repos/tenancy/users.js'
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js'
import { recordAuditEvent } from '../audit/record.js'
import { AppError } from '../errors.js'
import { findSecondFactors } from '../../db/repos/account-security/second-factors.js'
import { loginMethods, verifyRecoveryCode, verifyTotp, type MfaMethod } from '../account-security/second-factor/factors.js'
import { mfaTokenHash, newMfaToken, parseMfaToken, type MfaToken } from '../account-security/second-factor/mfa-token.js'
import type { MfaSettings } from '../account-security/second-factor/settings.js'
import { checkCode, useUpCode } from '../account-security/codes/check-code.js'
import type { CodeBinding } from '../account-security/codes/codes.js'
import { issueCode, type CodeIssuing, type IssuedCode } from '../account-security/codes/issue-code.js'
import { loginFailed, loginLocked, loginSucceeded } from './account-events.js'
import { clientOrigin } from './client-info.js'
import type { AuthDeps, ClientInfo } from './deps.js'
import { awaitAdmission, lockoutLimits } from './lockout.js'
import { openSession } from './open-session.js'
import type { TokenPair } from './tokens.js'
import { toMinimalUser, type MinimalUser } from './user-response.js'

/**
 * The second step of a login whose user has a second factor (POST /v1/login/mfa and /v1/login/mfa/sms). The password
 * step stored a challenge: the SHA-256 of a random token, for that user, for SVC_MFA_TOKEN_TTL_SECONDS; the token
 * travels in the mfa cookie. It is one login attempt's: used up by the step that opens the session, and worth nothing
 * for any other user, since the user comes from its row, never from the request.
 */
export interface PendingSecondStep {
  token: MfaToken
  methods: MfaMethod[]
  expiresIn: number
}

export interface SecondStepDeps extends AuthDeps {
  mfa: MfaSettings
  issuing: CodeIssuing
}

export interface SecondFactorAnswer {
  method: MfaMethod
  code: string
}

const tokenInvalid = () => new AppError('MFA_TOKEN_INVALID')

interface ChallengedUser {
  user: UserRecord
  tenant: Tenant
}

/**
 * After a right password of a user with a factor: the attempt's challenge, in one transaction that also takes back
 * the admission's count (the password was no failure) without forgiving earlier failures.
 */
export async function startSecondStep(deps: AuthDeps, key: UserKey, phoneVerified: boolean): Promise<PendingSecondStep> {
  const token = newMfaToken(key.tenantId)
  const expiresIn = deps.env.SVC_MFA_TOKEN_TTL_SECONDS
  const methods = await withTenant(deps.db, key.tenantId, async (trx) => {
    await settleUserAttempt(trx, key)
    await insertMfaChallenge(trx, { tenantId: key.tenantId, tokenHash: mfaTokenHash(token), userId: key.userId, ttlSeconds: expiresIn })
    return loginMethods(trx, key, phoneVerified)
  })
  return { token, methods, expiresIn }
}

/** The user of a live challenge, with its tenant, or null. `lock` holds the challenge until the transaction ends. */
async function challengedUser(trx: TenantTx, token: MfaToken, lock: boolean): Promise<ChallengedUser | null> {
  const userId = await findMfaChallenge(trx, token.tenantId, mfaTokenHash(token), lock)
  if (userId === null) return null
  // Not findUserWithTenant: its read ends read-only transactions, refused in this one, which writes
  // (ReadOnlyEndInWritingTransactionError, db/driver/lent-connection.ts).
  const [user, tenant] = [await findUserById(trx, userId), await findTenantById(trx, token.tenantId)]
  return user && tenant ? { user, tenant } : null
}

/**
 * POST /v1/login/mfa/sms: an MFA_SMS code to the verified phone of the challenge's user, with the limits of every
 * code (OTP_RATE_LIMITED); MFA_NOT_ENABLED when the user has no SMS factor, PHONE_NOT_VERIFIED when the phone
 * changed since. The caller kicks the dispatcher after the commit.
 */
export async function sendSecondStepCode(deps: SecondStepDeps, cookie: string | undefined): Promise<IssuedCode> {
  const token = parseMfaToken(cookie)
  if (!token) throw tokenInvalid()
  return withTenant(deps.db, token.tenantId, async (trx) => {
    const challenged = await challengedUser(trx, token, false)
    if (!challenged) throw tokenInvalid()
    const { user, tenant } = challenged
    const factors = await findSecondFactors(trx, { tenantId: tenant.id, userId: user.id })
    if (factors?.smsEnabledAt == null) throw new AppError('MFA_NOT_ENABLED')
    if (user.phone === null || user.phoneVerifiedAt === null) throw new AppError('PHONE_NOT_VERIFIED')
    return issueCode(trx, deps.issuing, { tenantId: tenant.id, userId: user.id, purpose: 'MFA_SMS', phone: user.phone, tenantName: tenant.name })
  })
}

/** Whether `answer` proves the user, using up what it used: a TOTP step, the SMS code, a recovery code. */
async function proves(trx: TenantTx, deps: SecondStepDeps, user: UserRecord, answer: SecondFactorAnswer): Promise<boolean> {
  const owner = { tenantId: user.tenantId, userId: user.id }
  switch (answer.method) {
    case 'TOTP':
      return verifyTotp(trx, deps.mfa, owner, answer.code)
    case 'RECOVERY_CODE':
      return verifyRecoveryCode(trx, deps.mfa, owner, answer.code)
    case 'SMS': {
      const factors = await findSecondFactors(trx, owner)
      if (factors?.smsEnabledAt == null || user.phone === null || user.phoneVerifiedAt === null) return false
      const binding: CodeBinding = { ...owner, purpose: 'MFA_SMS', phone: user.phone }
      if ((await checkCode(trx, deps.issuing.codes, binding, answer.code)) !== 'valid') return false
      await useUpCode(trx, binding)
      return true
    }
  }
}

type StepOutcome =
  | { kind: 'session'; tokens: TokenPair; user: MinimalUser }
  | { kind: 'refused'; code: 'MFA_TOKEN_INVALID' | 'MFA_CODE_INVALID' | 'AUTH_010' | 'AUTH_015' }

/**
 * POST /v1/login/mfa. The attempt is admitted on the user's login-failure key first, as a login is (AUTH_018 while
 * locked); then, in one transaction that holds the challenge: a right code uses the challenge up and opens the
 * session exactly as a login does (device category replacement, failures forgiven, LOGIN_SUCCEEDED); a wrong one is
 * counted as a failed login (LOGIN_FAILED, LOGIN_LOCKED when it starts the lock) and commits so, answering
 * MFA_CODE_INVALID; the challenge stays for another try until it expires or the lock stops it.
 */
export async function completeSecondStep(
  deps: SecondStepDeps,
  cookie: string | undefined,
  answer: SecondFactorAnswer,
  client: ClientInfo,
): Promise<{ tokens: TokenPair; user: MinimalUser }> {
  const token = parseMfaToken(cookie)
  if (!token) throw tokenInvalid()
  const limits = lockoutLimits(deps.env)
  const { key } = await awaitAdmission(() =>
    withTenant(deps.db, token.tenantId, async (trx) => {
      const userId = await findMfaChallenge(trx, token.tenantId, mfaTokenHash(token), false)
      if (userId === null) throw tokenInvalid()
      const key: UserKey = { tenantId: token.tenantId, userId }
      const admission = await admitUserAttempt(trx, key, limits)
      return admission.admitted ? { admitted: true as const, key } : admission
    }),
  )

  const outcome = await withTenant(deps.db, token.tenantId, async (trx): Promise<StepOutcome> => {
    const challenged = await challengedUser(trx, token, true)
    if (!challenged || challenged.user.id !== key.userId) {
      // Used up by a concurrent step since the admission: that attempt was no failure either.
      await settleUserAttempt(trx, key)
      return { kind: 'refused', code: 'MFA_TOKEN_INVALID' }
    }
    const { user, tenant } = challenged
    const anonymous = clientOrigin(client, null)
    if (!(await proves(trx, deps, user, answer))) {
      const lock = await recordUserLoginFailure(trx, key, limits.maxFailures, limits.lockSeconds)
      await recordAuditEvent(trx, key.tenantId, anonymous, loginFailed(user.id, 'WRONG_SECOND_FACTOR'))
      if (lock) await recordAuditEvent(trx, key.tenantId, anonymous, loginLocked(user.id, lock))
      return { kind: 'refused', code: 'MFA_CODE_INVALID' }
    }
    await deleteMfaChallenge(trx, token.tenantId, mfaTokenHash(token))
    if (tenant.status !== 'ACTIVE') {
      await clearUserLoginFailures(trx, key)
      await recordAuditEvent(trx, key.tenantId, anonymous, loginFailed(user.id, 'TENANT_NOT_ACTIVE'))
      return { kind: 'refused', code: 'AUTH_010' }
    }
    const subject = { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug }
    const opened = await openSession(trx, deps, subject, client, { upgradedHash: null })
    const event = opened
      ? loginSucceeded(user.id, { sid: opened.sid, deviceCategory: client.deviceCategory }, 'password', answer.method)
      : loginFailed(user.id, 'USER_NOT_ACTIVE')
    await recordAuditEvent(trx, key.tenantId, opened ? clientOrigin(client, user.id) : anonymous, event)
    return opened ? { kind: 'session', tokens: opened.tokens, user: toMinimalUser(user, tenant) } : { kind: 'refused', code: 'AUTH_015' }
  })
  if (outcome.kind === 'refused') throw new AppError(outcome.code)
  return outcome
}
