import { createSigner, createVerifier } from 'fast-jwt'
import type { KeyObject } from 'node:crypto'
import type { PublicJwk, SigningAlgorithm, SigningKey } from './signing-keys.js'
import { VerifiedTokens } from './verified-tokens.js'

/** Signs and verifies the service's tokens with its key set (docs/security.md#signing-keys). */
export interface TokenKeys {
  /** Signs claims (iat and exp included) with the first key of the set that may sign, else with the secret. */
  sign(claims: Record<string, unknown>): Promise<string>
  /** The payload of a token signed by a key of the set (or the secret), unexpired, from this issuer; else throws. */
  verify(token: string): Promise<Readonly<Record<string, unknown>>>
  /** GET /.well-known/jwks.json: the public half of every asymmetric key, in the set's order. */
  readonly jwks: { keys: PublicJwk[] }
}

export interface TokenKeysOptions {
  /** SVC_JWT_KEYS, already checked (readSigningKeys); empty when unset. */
  keys: readonly SigningKey[]
  /** SVC_JWT_SECRET (or the development secret): signs when no key may, and verifies tokens without `kid`. */
  secret: string | null
  issuer: string
  /** Tokens kept as verified per instance (lib/sign-in/verified-tokens.ts); 0 turns the cache off. */
  verifiedCacheSize?: number
}

type Verify = (token: string) => Record<string, unknown>

// What the service's own tokens carry in their header. A token naming where to fetch a key (`jku`, `x5u`), carrying
// one (`jwk`, `x5c`) or asking for extensions (`crit`) is refused outright, whatever it is signed with.
const HEADER_MEMBERS = new Set(['alg', 'kid', 'typ'])
const DEFAULT_VERIFIED_CACHE_SIZE = 10_000

class UntrustedToken extends Error {}

/** fast-jwt takes an HMAC key as its bytes and an asymmetric one as PEM. */
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
    return typeof header === 'object' && header !== null && !Array.isArray(header) ? (header as Record<string, unknown>) : null
  } catch {
    return null
  }
}

export function createTokenKeys(options: TokenKeysOptions): TokenKeys {
  // One verifier per key, each admitting only its key's algorithm: the key is chosen by `kid` alone, so an HS256
  // token naming a published public key (algorithm confusion) or a token of another algorithm never reaches a
  // verifier that would accept it.
  const verifierOf = (key: Buffer | string, alg: SigningAlgorithm): Verify =>
    createVerifier({ key, algorithms: [alg], allowedIss: options.issuer, requiredClaims: ['iss', 'iat', 'exp'] })
  const byKid = new Map(options.keys.map((key) => [key.kid, { alg: key.alg, verify: verifierOf(keyMaterial(key.verifyKey, 'public'), key.alg) }]))
  const secret = options.secret ? Buffer.from(options.secret) : null
  const bySecret = secret ? verifierOf(secret, 'HS256') : null
  const signer = options.keys.find((key) => key.signs)
  const signWith = signer
    ? createSigner({ key: keyMaterial(signer.signingKey, 'private'), algorithm: signer.alg, kid: signer.kid, iss: options.issuer })
    : secret && createSigner({ key: secret, algorithm: 'HS256', iss: options.issuer })
  if (!signWith) throw new Error('token keys: no key that may sign, and no secret')
  const verified = new VerifiedTokens<Readonly<Record<string, unknown>>>(options.verifiedCacheSize ?? DEFAULT_VERIFIED_CACHE_SIZE)

  function verifierFor(token: string): Verify {
    const header = headerOf(token)
    if (!header) throw new UntrustedToken('header')
    for (const member of Object.keys(header)) if (!HEADER_MEMBERS.has(member)) throw new UntrustedToken(member)
    if (header.kid === undefined) {
      if (bySecret && header.alg === 'HS256') return bySecret
      throw new UntrustedToken('kid')
    }
    const key = typeof header.kid === 'string' ? byKid.get(header.kid) : undefined
    if (!key || key.alg !== header.alg) throw new UntrustedToken('kid')
    return key.verify
  }

  return {
    async sign(claims) {
      return signWith(claims)
    },
    async verify(token) {
      const known = verified.get(token, Date.now())
      if (known) return known
      const payload = Object.freeze(verifierFor(token)(token))
      verified.set(token, payload, (payload.exp as number) * 1000)
      return payload
    },
    jwks: { keys: options.keys.flatMap((key) => (key.publicJwk ? [key.publicJwk] : [])) },
  }
}
