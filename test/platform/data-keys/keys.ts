import { randomBytes } from 'node:crypto'

// Keys for the data-key tests: SVC_DATA_KEYS values made of random keys, and the material a log or an error must
// never show.

export interface TestDataKey {
  kid: string
  /** base64, as SVC_DATA_KEYS takes it. */
  key: string
}

export function newDataKey(kid: string): TestDataKey {
  return { kid, key: randomBytes(32).toString('base64') }
}

/** An SVC_DATA_KEYS value; `{ kid }` alone places the key of SVC_OTP_SECRET or SVC_JWT_SECRET. */
export const dataKeysSetting = (...keys: Array<TestDataKey | { kid: string }>) => JSON.stringify(keys)

/** Every spelling of a key's material a leak could take: base64, base64url, hex. */
export function spellings(key: TestDataKey): string[] {
  const bytes = Buffer.from(key.key, 'base64')
  return [key.key, bytes.toString('base64url'), bytes.toString('hex')]
}

/** An SVC_JWT_KEYS value, for an app that signs without SVC_JWT_SECRET. */
export const hs256Keys = () =>
  JSON.stringify({ keys: [{ kty: 'oct', kid: `jwt-${randomBytes(3).toString('hex')}`, alg: 'HS256', k: randomBytes(32).toString('base64url') }] })
