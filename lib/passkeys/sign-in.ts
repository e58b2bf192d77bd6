import { randomUUID } from 'node:crypto'
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { putSignInChallenge, takeSignInChallenge } from '../../db/repos/passkeys/challenges.js'
import { findPasskeyOwner } from '../../db/repos/passkeys/directory.js'
import { findPasskeyForSignIn, recordPasskeyUse } from '../../db/repos/passkeys/passkeys.js'
import { findTenantById } from '../../db/repos/tenancy/tenants.js'
import { findUserById } from '../../db/repos/tenancy/users.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { recordAuditEvent } from '../audit/record.js'
import { AppError } from '../errors.js'
import { loginFailed, loginSucceeded, type LoginFailureReason } from '../sign-in/account-events.js'
import { clientOrigin } from '../sign-in/client-info.js'
import type { AuthDeps, ClientInfo } from '../sign-in/deps.js'
import { openSession } from '../sign-in/open-session.js'
import type { TokenPair } from '../sign-in/tokens.js'
import { toMinimalUser, type MinimalUser } from '../sign-in/user-response.js'
import { challengeHash, requestOptions, userHandle, verifyAssertion } from './ceremony.js'
import type { PasskeySettings } from './settings.js'

/**
 * Sign-in with a discoverable passkey (POST /v1/login/passkey/options, then POST /v1/login/passkey). No user or
 * tenant is known when the options are asked for, so the challenge is stored outside any tenant: its SHA-256 and
 * expiry under a random challengeId (passkey_sign_in_challenges, no RLS), used up by the first assertion that
 * names it, whatever then happens. The assertion's credential id finds its tenant and user in passkey_directory
 * (ids only); everything else is read and checked inside that tenant's transaction, and the session opens there
 * exactly as a password login's does (lib/sign-in/open-session.ts).
 */
export type PasskeySignInOptions = PublicKeyCredentialRequestOptionsJSON & { challengeId: string }

export async function startPasskeySignIn(deps: Pick<AuthDeps, 'db'>, settings: PasskeySettings): Promise<PasskeySignInOptions> {
  const options = await requestOptions(settings)
  const challengeId = randomUUID()
  await putSignInChallenge(deps.db, { id: challengeId, challengeHash: challengeHash(options.challenge), ttlSeconds: settings.challengeSeconds })
  return { ...options, challengeId }
}

type Outcome =
  | { kind: 'session'; tokens: TokenPair; user: MinimalUser }
  | { kind: 'refused'; code: 'AUTH_001' | 'AUTH_010' }

/**
 * Anything that does not verify (no live challenge, a wrong origin, RP ID, signature or user handle, no user
 * verification, a counter that went backwards), an unknown credential, a user no longer ACTIVE: AUTH_001; a tenant
 * not ACTIVE: AUTH_010, after the assertion verified. A known user's refusal is audited LOGIN_FAILED with
 * `method: passkey`, in a transaction that commits. Passkey failures never count toward the password lockout, and
 * the lockout does not stop a passkey (a guessed password cannot lock a user out of it); a success forgives earlier
 * password failures, as any successful login does.
 */
export async function signInWithPasskey(
  deps: AuthDeps,
  settings: PasskeySettings,
  input: { challengeId: string; response: AuthenticationResponseJSON },
  client: ClientInfo,
): Promise<{ tokens: TokenPair; user: MinimalUser }> {
  const storedHash = await takeSignInChallenge(deps.db, input.challengeId)
  const credentialId = input.response.id
  const owner = await findPasskeyOwner(deps.db, credentialId)
  if (!owner) throw new AppError('AUTH_001')
  const anonymous = clientOrigin(client, null)

  const outcome = await withTenant(deps.db, owner.tenantId, async (trx): Promise<Outcome> => {
    const passkey = await findPasskeyForSignIn(trx, owner.tenantId, credentialId)
    const user = passkey && passkey.userId === owner.userId ? await findUserById(trx, passkey.userId) : undefined
    const tenant = await findTenantById(trx, owner.tenantId)
    if (!passkey || !user || !tenant) return { kind: 'refused', code: 'AUTH_001' }
    const refuse = async (reason: LoginFailureReason, code: 'AUTH_001' | 'AUTH_010'): Promise<Outcome> => {
      await recordAuditEvent(trx, tenant.id, anonymous, loginFailed(user.id, reason, 'passkey'))
      return { kind: 'refused', code }
    }

    const asserted = storedHash
      ? await verifyAssertion(settings, input.response, passkey, storedHash, userHandle(tenant.id, user.id))
      : null
    if (!asserted) return refuse('PASSKEY_INVALID', 'AUTH_001')
    await recordPasskeyUse(trx, tenant.id, passkey.id, asserted.counter)
    if (tenant.status !== 'ACTIVE') return refuse('TENANT_NOT_ACTIVE', 'AUTH_010')
    if (user.status !== 'ACTIVE') return refuse('USER_NOT_ACTIVE', 'AUTH_001')

    const subject = { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug }
    const opened = await openSession(trx, deps, subject, client, { upgradedHash: null })
    if (!opened) return refuse('USER_NOT_ACTIVE', 'AUTH_001')
    const event = loginSucceeded(user.id, { sid: opened.sid, deviceCategory: client.deviceCategory }, 'passkey')
    await recordAuditEvent(trx, tenant.id, clientOrigin(client, user.id), event)
    return { kind: 'session', tokens: opened.tokens, user: toMinimalUser(user, tenant) }
  })
  if (outcome.kind === 'refused') throw new AppError(outcome.code)
  return outcome
}
