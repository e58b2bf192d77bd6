import type { Kysely } from 'kysely'
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { putEnrolmentChallenge, takeEnrolmentChallenge } from '../../db/repos/passkeys/challenges.js'
import {
  countPasskeysLocked,
  deletePasskey,
  insertPasskey,
  passkeyCredentialIds,
  renamePasskey,
  type PasskeySummary,
} from '../../db/repos/passkeys/passkeys.js'
import { findUserById } from '../../db/repos/tenancy/users.js'
import { violatedUniqueConstraint } from '../../db/errors.js'
import type { DB } from '../../db/schema.js'
import { withRequestTransaction, type RequestScope, type TenantTx } from '../../db/tenant-transaction.js'
import { recordAuditEvent, type AuditOrigin } from '../audit/record.js'
import { AppError } from '../errors.js'
import { challengeHash, creationOptions, verifyCreation, type VerifiedCreation } from './ceremony.js'
import { passkeyAdded, passkeyRemoved } from './events.js'
import type { PasskeySettings } from './settings.js'

/**
 * Enrolment of a passkey by a signed-in user (POST /v1/me/passkeys/options, then POST /v1/me/passkeys with the
 * password). The options store the challenge's SHA-256 for that user (one live challenge per user: a new one
 * replaces it) for 300 s; the response is checked against it by the route's proof, which uses it up in a transaction
 * of its own (committed whether the response then verifies or not: single use), and the handler stores the passkey.
 */
type Owner = { tenantId: number; userId: number }

const limitReached = () => new AppError('PASSKEY_LIMIT')

export async function startEnrolment(trx: TenantTx, settings: PasskeySettings, owner: Owner): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const user = await findUserById(trx, owner.userId)
  if (!user) throw new AppError('AUTH_015')
  const existing = await passkeyCredentialIds(trx, owner)
  if (existing.length >= settings.maxPerUser) throw limitReached()
  const options = await creationOptions(settings, { ...owner, userLoginId: user.userLoginId, name: user.name }, existing)
  await putEnrolmentChallenge(trx, { ...owner, challengeHash: challengeHash(options.challenge), ttlSeconds: settings.challengeSeconds })
  return options
}

/**
 * The creation response verified against the caller's own live challenge, which it uses up (committed at once, in a
 * transaction that checks the access token again): a replay, another user's challenge or an expired one finds no
 * row, and a response that fails any check leaves the challenge used. PASSKEY_INVALID for all of them.
 */
export async function verifyEnrolment(
  db: Kysely<DB>,
  settings: PasskeySettings,
  caller: RequestScope & Owner,
  response: RegistrationResponseJSON,
): Promise<VerifiedCreation> {
  let taken = false
  let failure: unknown = null
  const verified = await verifyCreation(settings, response, async (hash) => {
    try {
      taken = await withRequestTransaction(db, caller, (trx) => takeEnrolmentChallenge(trx, caller, hash))
    } catch (error) {
      // The access token's own refusal (revoked meanwhile) or the database's: answered as such, not as a bad response.
      failure = error
    }
    return taken
  })
  if (failure !== null) throw failure
  if (!verified || !taken) throw new AppError('PASSKEY_INVALID')
  return verified
}

/** Stores a verified passkey under the user's row lock (at most settings.maxPerUser), with PASSKEY_ADDED. */
export async function addPasskey(
  trx: TenantTx,
  settings: PasskeySettings,
  owner: Owner,
  credential: VerifiedCreation,
  name: string | undefined,
  origin: AuditOrigin,
): Promise<PasskeySummary> {
  if ((await countPasskeysLocked(trx, owner)) >= settings.maxPerUser) throw limitReached()
  let passkey: PasskeySummary
  try {
    passkey = await insertPasskey(trx, {
      tenantId: owner.tenantId,
      userId: owner.userId,
      credentialId: credential.credentialId,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: credential.transports,
      backedUp: credential.backedUp,
      name: name ?? 'Passkey',
    })
  } catch (error) {
    // A credential id already held, by this user or anyone else in any tenant (passkey_directory's key): an
    // authenticator makes a fresh random id for every credential, so a second one is a replayed or forged response.
    if (violatedUniqueConstraint(error) !== null) throw new AppError('PASSKEY_INVALID')
    throw error
  }
  await recordAuditEvent(trx, owner.tenantId, origin, passkeyAdded(owner.userId, passkey))
  return passkey
}

export async function renameOwnPasskey(trx: TenantTx, owner: Owner, id: number, name: string): Promise<PasskeySummary> {
  const renamed = await renamePasskey(trx, owner, id, name)
  if (!renamed) throw new AppError('PASSKEY_NOT_FOUND')
  return renamed
}

export async function removeOwnPasskey(trx: TenantTx, owner: Owner, id: number, origin: AuditOrigin): Promise<void> {
  if (!(await deletePasskey(trx, owner, id))) throw new AppError('PASSKEY_NOT_FOUND')
  await recordAuditEvent(trx, owner.tenantId, origin, passkeyRemoved(owner.userId, { passkeyId: id }))
}
