import { describe, expect, it } from 'vitest'
import { identityFromApiKey, identityFromClaims } from '../../lib/sign-in/identity.js'
import type { TokenClaims } from '../../lib/sign-in/tokens.js'

const claims: TokenClaims = {
  sub: '42',
  tenant_slug: 'bright-math-x7k2qp',
  tenant_id: 7,
  role: 'INSTRUCTOR',
  type: 'access',
  sid: '6f1c9a52-0d4e-4b8a-9a43-2f0c1e7d5b10',
  jti: '0b6e3f4a-8c2d-4f1e-a7b9-5d3c2e1f0a98',
  iat: 1_800_000_000,
  exp: 1_800_000_900,
  iss: 'svc-auth',
}

describe('identityFromClaims', () => {
  it('names the caller of verified access-token claims: numeric user id, ROLE_<role>, expiry from exp', () => {
    expect(identityFromClaims(claims)).toEqual({
      userId: 42,
      tenantSlug: 'bright-math-x7k2qp',
      tenantId: 7,
      role: 'INSTRUCTOR',
      authority: 'ROLE_INSTRUCTOR',
      sid: claims.sid,
      jti: claims.jti,
      accessExpiresAt: new Date(1_800_000_900 * 1000),
      apiKeyId: null,
    })
  })
})

describe('identityFromApiKey', () => {
  it("names the key's creator, in the creator's tenant, with the key and no session or token", () => {
    const identity = identityFromApiKey({ apiKeyId: 9, tenantId: 7, tenantSlug: 'bright-math-x7k2qp', userId: 42, role: 'MANAGER', scopes: ['sms:read'] })
    expect(identity).toEqual({
      userId: 42,
      tenantSlug: 'bright-math-x7k2qp',
      tenantId: 7,
      role: 'MANAGER',
      authority: 'ROLE_MANAGER',
      sid: '',
      jti: '',
      accessExpiresAt: new Date(0),
      apiKeyId: 9,
    })
  })
})
