import type { Kysely } from 'kysely'
import { countSealedByKey, readSealedValue, type SealedKeyCount, type SealedKind, type SealedOwner } from '../../db/repos/sealed-values.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { openRecoveryKey } from '../account-security/second-factor/recovery-key.js'
import { openSecret } from '../account-security/second-factor/sealed-secret.js'
import { FACTOR_KEY_INFO } from '../account-security/second-factor/settings.js'
import { secretSealingKeys, unsealSigningSecret } from '../events/signing-secret.js'
import { derivedRing, holdsKid, type KeyRing } from '../crypto/key-ring.js'
import { missingKeysProblem } from './missing-keys.js'
import { sealedKid } from '../crypto/seal.js'

/**
 * Whether the ring opens what is sealed, checked at start: every kid that sealed data must be in the ring, and its key
 * must open one of the values tried (two per kind and kid, read in their tenant's transaction). The second part is
 * what catches a legacy key swapped for another (SVC_JWT_SECRET's for SVC_OTP_SECRET's, say): what it sealed names no
 * kid. Answers the problem to stop the start with (lib/data-keys/missing-keys.ts), or null.
 */
export async function dataKeysProblem(db: Kysely<DB>, dataKeys: KeyRing): Promise<string | null> {
  const counts = await countSealedByKey(db)
  return missingKeysProblem(dataKeys, counts, await kidsThatOpenNothing(db, dataKeys, counts))
}

async function kidsThatOpenNothing(db: Kysely<DB>, dataKeys: KeyRing, counts: readonly SealedKeyCount[]): Promise<Set<string | null>> {
  const opens = opener(dataKeys)
  const verdicts = new Map<string | null, boolean>()
  for (const count of counts) {
    // A set of recovery codes under the legacy key has no sealed value: its codes are hashes, which prove nothing here.
    if (!holdsKid(dataKeys, count.keyId) || verdicts.get(count.keyId) || (count.kind === 'recovery_code_key' && count.keyId === null)) continue
    for (const owner of count.samples) {
      const stored = await withTenant(db, owner.tenantId, (trx) => readSealedValue(trx, count.kind, owner))
      // Changed since it was counted: a request replaced it, and it proves nothing either way.
      if (stored === null || sealedKid(stored) !== count.keyId) continue
      const opened = opens(count.kind, owner, stored)
      verdicts.set(count.keyId, opened)
      if (opened) break
    }
  }
  return new Set([...verdicts].filter(([, opened]) => !opened).map(([kid]) => kid))
}

function opener(dataKeys: KeyRing): (kind: SealedKind, owner: SealedOwner, stored: string) => boolean {
  const factorKeys = derivedRing(dataKeys, FACTOR_KEY_INFO)
  const webhookKeys = secretSealingKeys(dataKeys)
  return (kind, owner, stored) => {
    if (kind === 'webhook_secret') return unsealSigningSecret(webhookKeys, owner.tenantId, stored) !== null
    const user = { tenantId: owner.tenantId, userId: owner.userId ?? 0 }
    if (kind === 'recovery_code_key') return openRecoveryKey(factorKeys, user, stored) !== null
    return openSecret(factorKeys, user, stored) !== null
  }
}
