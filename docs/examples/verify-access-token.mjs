// Checks this service's access tokens in another service, with the public keys it publishes at
// GET /.well-known/jwks.json. Plain Node (ESM) and `jose` only: npm install jose
//
//   AUTH_BASE_URL  where the auth service is reached, e.g. https://auth.academy.example (required)
//   AUTH_ISSUER    the service's SVC_JWT_ISSUER (default svc-auth-svc)
import { createRemoteJWKSet, errors, jwtVerify } from 'jose'

const baseUrl = process.env.AUTH_BASE_URL
if (!baseUrl) throw new Error('AUTH_BASE_URL is not set: the base URL of the auth service')
const issuer = process.env.AUTH_ISSUER || 'svc-auth-svc'

// One key set per process: jose keeps the keys it fetched and fetches them again when a token names a `kid` it
// does not hold yet, which is how a newly promoted signing key is picked up without a restart. Keeping them no
// longer than the service's Cache-Control (5 minutes, not jose's default 10) means a removed key stops verifying
// here within the time the rotation procedure allows for it.
const keySet = createRemoteJWKSet(new URL(`${baseUrl.replace(/\/+$/, '')}/.well-known/jwks.json`), { cacheMaxAge: 300_000 })

// Public-key algorithms only: the set holds public keys, and this service holds no secret to check HS256 with.
const ALGORITHMS = ['EdDSA', 'ES256', 'RS256']

/**
 * The caller behind an access token (the `Authorization: Bearer` value without its prefix). Throws a jose error
 * (an `errors.JOSEError`) for anything else: a bad signature, an unknown key, another issuer, an expired token, a
 * refresh token. Signature, issuer and expiry only: a token revoked by logout or a password change still passes
 * here until it expires.
 */
export async function verifyAccessToken(token) {
  const { payload } = await jwtVerify(token, keySet, { issuer, algorithms: ALGORITHMS, requiredClaims: ['sub', 'exp'] })
  // Refresh tokens are signed with the same keys; only `type` tells them apart, and one must never authenticate a call.
  if (payload.type !== 'access') {
    throw new errors.JWTClaimValidationFailed('not an access token', payload, 'type', 'check_failed')
  }
  return {
    userId: Number(payload.sub),
    tenantId: payload.tenant_id,
    tenantSlug: payload.tenant_slug,
    role: payload.role,
    sessionId: payload.sid,
    expiresAt: new Date(payload.exp * 1000),
  }
}
