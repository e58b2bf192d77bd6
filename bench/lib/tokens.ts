import { createHmac, randomUUID } from 'node:crypto'

/** The service's default issuer (SVC_JWT_ISSUER); the harness never overrides it. */
export const ISSUER = 'svc-auth-svc'

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

export interface AccessClaims {
  userId: number
  tenantId: number
  tenantSlug: string
  role: 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT'
}

/**
 * An HS256 access token with the service's claim set, signed by hand. Baselines get these so their figures never
 * depend on what the service's own sessions went through (a login elsewhere revokes the previous access token).
 */
export function signAccessToken(secret: string, claims: AccessClaims, lifetimeSeconds = 7200): string {
  const now = Math.floor(Date.now() / 1000)
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))
  const payload = base64url(
    JSON.stringify({
      sub: String(claims.userId),
      tenant_slug: claims.tenantSlug,
      tenant_id: claims.tenantId,
      role: claims.role,
      type: 'access',
      sid: randomUUID(),
      jti: randomUUID(),
      iat: now,
      exp: now + lifetimeSeconds,
      iss: ISSUER,
    }),
  )
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url')
  return `${header}.${payload}.${signature}`
}
