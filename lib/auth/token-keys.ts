import { createSecretKey, webcrypto, type KeyObject } from 'node:crypto'
import { jwtVerify, SignJWT, type JWTHeaderParameters, type JWTPayload } from 'jose'
import { SIGNING_ALGORITHMS, type PublicJwk, type SigningKey } from './signing-keys.js'
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
  /** Tokens kept as verified per instance (lib/auth/verified-tokens.ts); 0 turns the cache off. */
  verifiedCacheSize?: number
}

// What the service's own tokens carry in their header. A token naming where to fetch a key (`jku`, `x5u`), carrying
// one (`jwk`, `x5c`) or asking for extensions (`crit`) is refused outright, whatever it is signed with.
const HEADER_MEMBERS = new Set(['alg', 'kid', 'typ'])
const DEFAULT_VERIFIED_CACHE_SIZE = 10_000

class UntrustedToken extends Error {}

type JoseKey = KeyObject | webcrypto.CryptoKey

/**
 * The form jose uses a key in without converting it again. jose works through WebCrypto: it converts an asymmetric
 * KeyObject once and keeps the result, but imports an HMAC KeyObject anew on every sign and verify (about 30 µs of
 * CPU each), so HMAC keys are imported once here.
 */
function joseKeyOf(key: KeyObject): JoseKey | Promise<JoseKey> {
  if (key.type !== 'secret') return key
  return webcrypto.subtle.importKey('raw', key.export(), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
}

export function createTokenKeys(options: TokenKeysOptions): TokenKeys {
  const byKid = new Map(options.keys.map((key) => [key.kid, { alg: key.alg, verifyKey: joseKeyOf(key.verifyKey) }]))
  const secret = options.secret ? joseKeyOf(createSecretKey(Buffer.from(options.secret))) : null
  const signer = options.keys.find((key) => key.signs)
  const signing = signer
    ? { header: { alg: signer.alg, kid: signer.kid, typ: 'JWT' }, key: joseKeyOf(signer.signingKey) }
    : secret && { header: { alg: 'HS256', typ: 'JWT' }, key: secret }
  if (!signing) throw new Error('token keys: no key that may sign, and no secret')
  const verified = new VerifiedTokens<Readonly<JWTPayload>>(options.verifiedCacheSize ?? DEFAULT_VERIFIED_CACHE_SIZE)

  // The key is chosen by `kid` alone and used only with its own algorithm: an HS256 token naming a published public
  // key (algorithm confusion) or a token of another algorithm never reaches a verifier that would accept it.
  function keyFor(header: JWTHeaderParameters): JoseKey | Promise<JoseKey> {
    for (const member of Object.keys(header)) if (!HEADER_MEMBERS.has(member)) throw new UntrustedToken(member)
    if (header.kid === undefined) {
      if (secret && header.alg === 'HS256') return secret
      throw new UntrustedToken('kid')
    }
    const key = byKid.get(header.kid)
    if (!key || key.alg !== header.alg) throw new UntrustedToken('kid')
    return key.verifyKey
  }

  return {
    async sign(claims) {
      return new SignJWT(claims).setIssuer(options.issuer).setProtectedHeader(signing.header).sign(await signing.key)
    },
    async verify(token) {
      const now = Date.now()
      const known = verified.get(token, now)
      if (known) return known
      const { payload } = await jwtVerify(token, keyFor, {
        algorithms: [...SIGNING_ALGORITHMS],
        issuer: options.issuer,
        requiredClaims: ['iss', 'iat', 'exp'],
      })
      const frozen = Object.freeze(payload)
      verified.set(token, frozen, (payload.exp as number) * 1000)
      return frozen
    },
    jwks: { keys: options.keys.flatMap((key) => (key.publicJwk ? [key.publicJwk] : [])) },
  }
}
