import type { Kysely } from 'kysely'
import {
  countSealedByKey,
  replaceSealedFactor,
  replaceSealedWebhookSecret,
  sealedFactorsToMove,
  tenantIdsAfter,
  webhookSecretToMove,
  type SealedFactorColumn,
  type SealedFactors,
} from '../../db/repos/sealed-values.js'
import type { DB } from '../../db/schema.js'
import { withTenant, type TenantTx } from '../../db/tenant-transaction.js'
import { resealRecoveryKey } from '../account-security/second-factor/recovery-key.js'
import { openSecret, sealSecret } from '../account-security/second-factor/sealed-secret.js'
import { FACTOR_KEY_INFO } from '../account-security/second-factor/settings.js'
import { secretSealingKeys, sealSigningSecret, unsealSigningSecret } from '../events/signing-secret.js'
import { derivedRing, sealsWithoutKid, type KeyRing } from '../crypto/key-ring.js'
import { firstKeyPrefix } from '../crypto/seal.js'

export type ResealKind = 'totpSecrets' | 'pendingTotpSecrets' | 'recoveryCodeSets' | 'webhookSecrets'
export type ResealCounts = Record<ResealKind, number>

/** What `npm run data-keys:reseal` prints. */
export interface ResealReport {
  firstKid: string
  /** Values moved to the first key by this run. */
  resealed: ResealCounts
  /** Values no key of the ring opens (its key is missing, or the value was altered): left as they are. */
  unopenable: ResealCounts
  /** Sealed values per key once the run is over: what the start checks (no kid: the legacy key's). */
  sealedByKid: Record<string, number>
}

const TENANT_PAGE = 500
const USER_BATCH = 100
const zero = (): ResealCounts => ({ totpSecrets: 0, pendingTotpSecrets: 0, recoveryCodeSets: 0, webhookSecrets: 0 })

/**
 * Re-seals every value not yet under the ring's first key with that key, tenant by tenant, in transactions of a
 * hundred users at most, as the runtime role: safe beside running instances (each value is replaced only while it
 * is still what was read, so a change a request made meanwhile wins) and idempotent (a second run finds nothing).
 * Run it once every instance has the ring: a value moved to a key some instance lacks would not open there.
 */
export async function resealAll(db: Kysely<DB>, dataKeys: KeyRing): Promise<ResealReport> {
  const work: Work = {
    factorKeys: derivedRing(dataKeys, FACTOR_KEY_INFO),
    webhookKeys: secretSealingKeys(dataKeys),
    prefix: firstKeyPrefix(dataKeys),
    resealed: zero(),
    unopenable: zero(),
  }
  for (let after = 0; ; ) {
    const tenants = await tenantIdsAfter(db, after, TENANT_PAGE)
    for (const id of tenants) {
      await resealFactorsOf(db, work, id)
      await withTenant(db, id, (trx) => resealWebhookSecret(trx, work, id))
    }
    if (tenants.length < TENANT_PAGE) break
    after = tenants.at(-1)!
  }
  const sealedByKid: Record<string, number> = {}
  for (const { keyId, sealed } of await countSealedByKey(db)) {
    const kid = keyId ?? dataKeys.legacyKid ?? 'default or jwt'
    sealedByKid[kid] = (sealedByKid[kid] ?? 0) + sealed
  }
  return { firstKid: dataKeys.keys[0].kid, resealed: work.resealed, unopenable: work.unopenable, sealedByKid }
}

interface Work {
  factorKeys: KeyRing
  webhookKeys: KeyRing
  /** How the first key's values begin; the derived rings keep the kids, so one prefix serves every kind. */
  prefix: string
  resealed: ResealCounts
  unopenable: ResealCounts
}

async function resealFactorsOf(db: Kysely<DB>, work: Work, tenantId: number): Promise<void> {
  // A set of recovery codes without a key of its own was hashed under the legacy key: it gains that key, sealed.
  const keylessSets = !sealsWithoutKid(work.factorKeys)
  for (let after = 0; ; ) {
    const rows = await withTenant(db, tenantId, async (trx) => {
      const batch = await sealedFactorsToMove(trx, tenantId, work.prefix, keylessSets, after, USER_BATCH)
      for (const row of batch) await resealFactors(trx, work, tenantId, row, keylessSets)
      return batch
    })
    if (rows.length < USER_BATCH) return
    after = rows.at(-1)!.userId
  }
}

async function resealFactors(trx: TenantTx, work: Work, tenantId: number, row: SealedFactors, keylessSets: boolean): Promise<void> {
  const owner = { tenantId, userId: row.userId }
  const keys = work.factorKeys
  const moved = (value: string | null): value is string => value !== null && !value.startsWith(work.prefix)
  const replace = async (kind: ResealKind, column: SealedFactorColumn, from: string | null, to: string | null) => {
    if (to === null) work.unopenable[kind]++
    else if (await replaceSealedFactor(trx, owner, column, from, to)) work.resealed[kind]++
  }
  const reseal = (stored: string) => {
    const secret = openSecret(keys, owner, stored)
    return secret === null ? null : sealSecret(keys, owner, secret)
  }
  if (moved(row.totpSecret)) await replace('totpSecrets', 'totpSecret', row.totpSecret, reseal(row.totpSecret))
  if (moved(row.totpPendingSecret)) await replace('pendingTotpSecrets', 'totpPendingSecret', row.totpPendingSecret, reseal(row.totpPendingSecret))
  if (moved(row.recoveryKeySealed) || (keylessSets && row.recoveryKeySealed === null && row.hasRecoveryCodes)) {
    await replace('recoveryCodeSets', 'recoveryKeySealed', row.recoveryKeySealed, resealRecoveryKey(keys, owner, row.recoveryKeySealed))
  }
}

async function resealWebhookSecret(trx: TenantTx, work: Work, tenantId: number): Promise<void> {
  const stored = await webhookSecretToMove(trx, work.prefix)
  if (stored === undefined) return
  const secret = unsealSigningSecret(work.webhookKeys, tenantId, stored)
  if (secret === null) work.unopenable.webhookSecrets++
  else if (await replaceSealedWebhookSecret(trx, stored, sealSigningSecret(work.webhookKeys, tenantId, secret))) work.resealed.webhookSecrets++
}
