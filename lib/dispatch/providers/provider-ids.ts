import { randomInt } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'

/** A provider-shaped id (docs/provider.md#provider-ids): `M4V`/`G4V` + yyyyMMddHHmmss (UTC) + 15 of [0-9A-Z]. */
export function providerStyleId(prefix: 'M4V' | 'G4V', at = new Date()): string {
  const stamp = at.toISOString().replace(/\D/g, '').slice(0, 14)
  let suffix = ''
  for (let i = 0; i < 15; i++) suffix += ALPHABET[randomInt(ALPHABET.length)]
  return `${prefix}${stamp}${suffix}`
}
