import type { SealedKeyCount, SealedKind } from '../../db/repos/sealed-values.js'
import { holdsKid, type KeyRing } from '../crypto/key-ring.js'

const KIND_NAMES: Record<SealedKind, [one: string, many: string]> = {
  totp_secret: ['TOTP secret', 'TOTP secrets'],
  pending_totp_secret: ['pending TOTP enrolment', 'pending TOTP enrolments'],
  recovery_code_key: ['set of recovery codes', 'sets of recovery codes'],
  webhook_secret: ['webhook signing secret', 'webhook signing secrets'],
}

const counted = (sealed: number, kind: SealedKind) => `${sealed} ${KIND_NAMES[kind][sealed === 1 ? 0 : 1]}`

// What the legacy key sealed names no kid: it is the key of SVC_OTP_SECRET, or of SVC_JWT_SECRET without it.
const kidName = (kid: string | null) =>
  kid === null ? 'kid "default" or "jwt" (sealed before key ids, by the key of SVC_OTP_SECRET or else SVC_JWT_SECRET)' : `kid ${JSON.stringify(kid)}`

/**
 * The problem a start stops with when sealed data (`counts`, per kind and kid) names a key the ring lacks, or one
 * whose key in the ring opens none of the values tried (`unopened`: the key changed since it sealed them), or null.
 * Every such value would fail to open (a user locked out of the second step, a tenant's events never signed) and
 * nothing would say why. Names each kid and how many values of each kind it sealed, never a key.
 */
export function missingKeysProblem(ring: KeyRing, counts: readonly SealedKeyCount[], unopened: ReadonlySet<string | null>): string | null {
  const missing = new Map<string | null, SealedKeyCount[]>()
  for (const count of counts) {
    if (count.sealed > 0 && (!holdsKid(ring, count.keyId) || unopened.has(count.keyId))) {
      missing.set(count.keyId, [...(missing.get(count.keyId) ?? []), count])
    }
  }
  if (missing.size === 0) return null
  const each = [...missing].map(([kid, rows]) => {
    const total = rows.reduce((sum, row) => sum + row.sealed, 0)
    const why = holdsKid(ring, kid) ? ', which its key here does not open (the key is not the one that sealed them)' : ''
    return `${kidName(kid)} sealed ${total} value${total === 1 ? '' : 's'} (${rows.map((row) => counted(row.sealed, row.kind)).join(', ')})${why}`
  })
  const held = ring.keys.map((entry) => JSON.stringify(entry.kid)).join(', ')
  return (
    `SVC_DATA_KEYS: sealed data needs keys this configuration lacks, and would not open: ${each.join('; ')}. ` +
    `The ring holds ${held}. Put the missing key back; remove a key only after npm run -s data-keys:reseal has moved ` +
    'its values to the first key (docs/operations.md#rotating-data-keys)'
  )
}
