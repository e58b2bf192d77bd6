import { createSigner, createVerifier, type VerifierOptions } from 'fast-jwt'
import type { KeyObject } from 'node:crypto'
import type { PublicJwk, SigningAlgorithm, SigningKey } from './signing-keys.js'

/** Signs and verifies the service's tokens with its key set (docs/security.md#signing-keys). */
export interface TokenKeys {
  /** Signs claims (iat and exp included) with the first key of the set that may sign, else with the secret. */
  sign(claims: Record<string, unknown>): Promise<string>
  /**
   * The payload of a token signed by a key of the set (or the secret), unexpired, from this issuer; else throws. For
   * callers without a request (the in-process contract, refresh); requests verify through @fastify/jwt
   * (plugins/sign-in/auth.ts), with the same keyFor and verifyOptions.
   */
  verify(token: string): Promise<Readonly<Record<string, unknown>>>
  /**
   * The key that may verify a token with this header: the key its `kid` names, when the token's `alg` is that key's
   * algorithm, or the secret for an HS256 token without `kid`; throws for any other header.
   */
  keyFor(header: unknown): string | Buffer
  /** fast-jwt's verifier options apart from the key, one per key built from them: issuer, required claims, cache. */
  readonly verifyOptions: Readonly<Partial<VerifierOptions>>
  /** GET /.well-known/jwks.json: the public half of every asymmetric key, in the set's order. */
  readonly jwks: { keys: PublicJwk[] }
}

export interface TokenKeysOptions {
  /** SVC_JWT_KEYS, already checked (readSigningKeys); empty when unset. */
  keys: readonly SigningKey[]
  /** SVC_JWT_SECRET (or the development secret): signs when no key may, and verifies tokens without `kid`. */
  secret: string | null
  issuer: string
  /** Tokens each key's verifier keeps as verified (fast-jwt's cache); 0 turns the cache off. */
  verifiedCacheSize?: number
}

type Verify = (token: string) => Record<string, unknown>

interface VerifyingKey {
  alg: SigningAlgorithm
  material: string | Buffer
  verify: Verify
}

// What the service's own tokens carry in their header. A token naming where to fetch a key (`jku`, `x5u`), carrying
// one (`jwk`, `x5c`) or asking for extensions (`crit`) is refused outright, whatever it is signed with.
const HEADER_MEMBERS = new Set(['alg', 'kid', 'typ'])
const DEFAULT_VERIFIED_CACHE_SIZE = 10_000

class UntrustedToken extends Error {}

/**
 * fast-jwt takes an HMAC key as its bytes and an asymmetric one as PEM. The PEM stays a string: @fastify/jwt keeps one
 * verifier (and so one cache) per key it is given only when the key is a string.
 */
function keyMaterial(key: KeyObject, half: 'private' | 'public'): Buffer | string {
  if (key.type === 'secret') return key.export()
  return key.export(half === 'private' ? { type: 'pkcs8', format: 'pem' } : { type: 'spki', format: 'pem' }) as string
}

/** The token's header, read before any key is chosen; null when it is not a JSON object. */
function headerOf(token: string): Record<string, unknown> | null {
  const end = token.indexOf('.')
  if (end <= 0) return null
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, end), 'base64url').toString('utf8'))
    return isObject(header) ? header : null
  } catch {
    return null
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

export function createTokenKeys(options: TokenKeysOptions): TokenKeys {
  // The cache holds a token's payload under a hash of its whole text until its `exp` (at most fast-jwt's cacheTTL,
  // 10 minutes), so a client presenting one access token for many requests pays for its signature once per
  // instance; a changed byte misses. Revocation is not cached: the request's database statement checks it every time.
  // Failures are not cached (no errorCacheTTL).
  const verifyOptions: Partial<VerifierOptions> = Object.freeze({
    allowedIss: options.issuer,
    requiredClaims: ['iss', 'iat', 'exp'],
    cache: options.verifiedCacheSize ?? DEFAULT_VERIFIED_CACHE_SIZE,
  })
  // Each key's verifier admits only its key's algorithm: the key is chosen by `kid` alone, so an HS256 token naming a
  // published public key (algorithm confusion) or a token of another algorithm never reaches a verifier that would
  // accept it.
  const verifying = (material: string | Buffer, alg: SigningAlgorithm): VerifyingKey => ({
    alg,
    material,
    verify: createVerifier({ ...verifyOptions, key: material, algorithms: [alg] }),
  })
  const byKid = new Map(options.keys.map((key) => [key.kid, verifying(keyMaterial(key.verifyKey, 'public'), key.alg)]))
  const bySecret = options.secret ? verifying(options.secret, 'HS256') : null
  const signer = options.keys.find((key) => key.signs)
  const signWith = signer
    ? createSigner({ key: keyMaterial(signer.signingKey, 'private'), algorithm: signer.alg, kid: signer.kid, iss: options.issuer })
    : options.secret && createSigner({ key: Buffer.from(options.secret), algorithm: 'HS256', iss: options.issuer })
  if (!signWith) throw new Error('token keys: no key that may sign, and no secret')

  function keyOf(header: unknown): VerifyingKey {
    if (!isObject(header)) throw new UntrustedToken('header')
    for (const member of Object.keys(header)) if (!HEADER_MEMBERS.has(member)) throw new UntrustedToken(member)
    if (header.kid === undefined) {
      if (bySecret && header.alg === 'HS256') return bySecret
      throw new UntrustedToken('kid')
    }
    const key = typeof header.kid === 'string' ? byKid.get(header.kid) : undefined
    if (!key || key.alg !== header.alg) throw new UntrustedToken('kid')
    return key
  }

  return {
    async sign(claims) {
      return signWith(claims)
    },
    async verify(token) {
      // Frozen in the cache itself: the next hit answers the same object.
      return Object.freeze(keyOf(headerOf(token)).verify(token))
    },
    keyFor: (header) => keyOf(header).material,
    verifyOptions,
    jwks: { keys: options.keys.flatMap((key) => (key.publicJwk ? [key.publicJwk] : [])) },
  }
}
