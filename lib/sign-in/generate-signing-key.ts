import { randomBytes } from 'node:crypto'
import { exportJWK, generateKeyPair, generateSecret } from 'jose'
import type { SigningAlgorithm } from './signing-keys.js'

/** A private JWK of SVC_JWT_KEYS (`npm run -s keys:generate`), with a random `kid` and its `alg` and `use`. */
export interface PrivateSigningJwk {
  kid: string
  alg: SigningAlgorithm
  use: 'sig'
  kty: string
  [member: string]: string
}

/** One new key: Ed25519, P-256, RSA 2048 or a 32-byte HMAC secret, made by jose from Node's CSPRNG. */
export async function generateSigningKey(alg: SigningAlgorithm): Promise<PrivateSigningJwk> {
  const material =
    alg === 'HS256'
      ? await generateSecret('HS256', { extractable: true })
      : (await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) })).privateKey
  const jwk = await exportJWK(material)
  return { kid: randomBytes(12).toString('base64url'), alg, use: 'sig', ...(jwk as Record<string, string>), kty: jwk.kty as string }
}
