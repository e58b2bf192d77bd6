import { createPrivateKey, createPublicKey, createSecretKey, type KeyObject } from 'node:crypto'
import { collectKeys, readJsonSetting } from '../json-setting.js'

/** The algorithms a key of SVC_JWT_KEYS may name (docs/security.md#signing-keys). */
export const SIGNING_ALGORITHMS = ['EdDSA', 'ES256', 'RS256', 'HS256'] as const
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number]

/** The public half of an asymmetric key as GET /.well-known/jwks.json publishes it. */
export interface PublicJwk {
  kid: string
  alg: SigningAlgorithm
  use: 'sig'
  kty: string
  [member: string]: string
}

/** One key of the set: `signingKey` signs (the first key that may), `verifyKey` checks tokens whose header names `kid`. */
export interface SigningKey {
  kid: string
  alg: SigningAlgorithm
  /**
   * False for a key whose JWK `key_ops` is `["verify"]`: published and trusted, never used to sign. That is how a
   * key is introduced while SVC_JWT_SECRET still signs (docs/operations.md#from-svc_jwt_secret-to-keys).
   */
  signs: boolean
  signingKey: KeyObject
  verifyKey: KeyObject
  /** Null for HS256: a symmetric key is never published. */
  publicJwk: PublicJwk | null
}

export type SigningKeysResult = { keys: SigningKey[] } | { problem: string }

const MIN_HMAC_BYTES = 32
const MIN_RSA_BITS = 2048
const MIN_RSA_EXPONENT = 65537n
const MAX_KID_LENGTH = 128
// The JWK members that carry private material; the published key keeps everything else its type defines.
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { OKP: ['crv', 'x'], EC: ['crv', 'x', 'y'], RSA: ['n', 'e'] }

/**
 * Reads SVC_JWT_KEYS: a JWK Set as JSON text, or `file:` and a path to one. Every key is checked before any is
 * used, and the first problem stops the start. A problem names the key by its position and `kid`, never by any of
 * its material.
 */
export function readSigningKeys(setting: string): SigningKeysResult {
  const read = readJsonSetting('SVC_JWT_KEYS', setting, 'a JWK Set {"keys": [...]}')
  if ('problem' in read) return read
  const set = read.value
  const members = (set as { keys?: unknown } | null)?.keys
  if (typeof set !== 'object' || set === null || !Array.isArray(members) || members.length === 0) {
    return { problem: 'SVC_JWT_KEYS: a JWK Set needs a non-empty "keys" array' }
  }
  return collectKeys('SVC_JWT_KEYS', members, signingKeyOf)
}

function signingKeyOf(jwk: unknown): SigningKey | { problem: string } {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return { problem: 'not a JWK object' }
  const member = jwk as Record<string, unknown>
  const { kid, alg } = member
  if (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH) {
    return { problem: `needs a kid of 1 to ${MAX_KID_LENGTH} characters` }
  }
  if (typeof alg !== 'string' || !(SIGNING_ALGORITHMS as readonly string[]).includes(alg)) {
    return { problem: `alg must be one of ${SIGNING_ALGORITHMS.join(', ')}` }
  }
  if (member.use !== undefined && member.use !== 'sig') return { problem: 'use must be "sig" when given' }
  const signs = keyOpsSign(member.key_ops)
  if (signs === null) return { problem: 'key_ops, when given, must be ["sign", "verify"] or ["verify"]' }
  const expected = expectedKeyType(alg as SigningAlgorithm)
  if (member.kty !== expected.kty || (expected.crv && member.crv !== expected.crv)) {
    return { problem: `${alg} needs kty ${expected.kty}${expected.crv ? ` and crv ${expected.crv}` : ''}` }
  }
  const key = alg === 'HS256' ? hmacKey(kid, member) : asymmetricKey(kid, alg as Exclude<SigningAlgorithm, 'HS256'>, member)
  return 'problem' in key ? key : { ...key, signs }
}

/** Whether `key_ops` lets the key sign: absent or with "sign" yes, `["verify"]` no, anything else null (refused). */
function keyOpsSign(keyOps: unknown): boolean | null {
  if (keyOps === undefined) return true
  if (!Array.isArray(keyOps) || !keyOps.includes('verify')) return null
  if (keyOps.some((op) => op !== 'sign' && op !== 'verify') || new Set(keyOps).size !== keyOps.length) return null
  return keyOps.includes('sign')
}

function expectedKeyType(alg: SigningAlgorithm): { kty: string; crv?: string } {
  switch (alg) {
    case 'EdDSA':
      return { kty: 'OKP', crv: 'Ed25519' }
    case 'ES256':
      return { kty: 'EC', crv: 'P-256' }
    case 'RS256':
      return { kty: 'RSA' }
    case 'HS256':
      return { kty: 'oct' }
  }
}

type ReadKey = Omit<SigningKey, 'signs'>

function hmacKey(kid: string, jwk: Record<string, unknown>): ReadKey | { problem: string } {
  if (typeof jwk.k !== 'string' || !/^[A-Za-z0-9_-]*$/.test(jwk.k)) return { problem: 'needs k, the secret in base64url' }
  const secret = Buffer.from(jwk.k, 'base64url')
  if (secret.length < MIN_HMAC_BYTES) return { problem: `an HS256 key needs at least ${MIN_HMAC_BYTES} bytes (got ${secret.length})` }
  const key = createSecretKey(secret)
  return { kid, alg: 'HS256', signingKey: key, verifyKey: key, publicJwk: null }
}

function asymmetricKey(
  kid: string,
  alg: Exclude<SigningAlgorithm, 'HS256'>,
  jwk: Record<string, unknown>,
): ReadKey | { problem: string } {
  if (typeof jwk.d !== 'string') return { problem: 'needs its private part (d): any key may be promoted to sign' }
  let signingKey: KeyObject
  try {
    signingKey = createPrivateKey({ key: jwk as never, format: 'jwk' })
  } catch {
    return { problem: `not a valid ${alg} private key` }
  }
  const details = signingKey.asymmetricKeyDetails
  if (alg === 'RS256' && (details?.modulusLength ?? 0) < MIN_RSA_BITS) {
    return { problem: `an RS256 key needs at least ${MIN_RSA_BITS} bits (got ${details?.modulusLength})` }
  }
  // A small public exponent (3) is what the classic RSA signature forgeries need; 65537 is every generator's choice.
  if (alg === 'RS256' && (details?.publicExponent ?? 0n) < MIN_RSA_EXPONENT) {
    return { problem: `an RS256 key needs a public exponent of at least ${MIN_RSA_EXPONENT} (got ${details?.publicExponent})` }
  }
  const verifyKey = createPublicKey(signingKey)
  const exported = verifyKey.export({ format: 'jwk' }) as Record<string, string>
  const publicJwk: PublicJwk = { kid, alg, use: 'sig', kty: exported.kty as string }
  for (const name of PUBLIC_MEMBERS[publicJwk.kty] ?? []) publicJwk[name] = exported[name] as string
  return { kid, alg, signingKey, verifyKey, publicJwk }
}
