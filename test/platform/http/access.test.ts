import { describe, expect, it } from 'vitest'
import { policyOf, resolveAccess, STAFF_ROLES, UNROUTED } from '../../../lib/http/access.js'

describe('resolveAccess (what each access means)', () => {
  it.each([
    ['public', { credential: 'none', roles: null, tenantTransaction: false, csrfCookie: null }],
    ['user', { credential: 'access-token', roles: null, tenantTransaction: true, csrfCookie: 'access' }],
    ['staff', { credential: 'access-token', roles: STAFF_ROLES, tenantTransaction: true, csrfCookie: 'access' }],
    ['owner', { credential: 'access-token', roles: ['OWNER'], tenantTransaction: true, csrfCookie: 'access' }],
    [{ roles: ['OWNER', 'MANAGER'] }, { credential: 'access-token', roles: ['OWNER', 'MANAGER'], tenantTransaction: true, csrfCookie: 'access' }],
    ['internal-signed', { credential: 'internal-signature', roles: null, tenantTransaction: true, csrfCookie: null }],
    ['provider-callback', { credential: 'provider-secret', roles: null, tenantTransaction: false, csrfCookie: null }],
    ['refresh-cookie', { credential: 'refresh-cookie', roles: null, tenantTransaction: false, csrfCookie: 'refresh' }],
    ['metrics-token', { credential: 'metrics-token', roles: null, tenantTransaction: false, csrfCookie: null }],
  ] as const)('%j', (access, expected) => {
    expect(resolveAccess(access)).toMatchObject({ ...expected, addressBudget: null })
  })

  it('derives the refusals each access can answer', () => {
    expect(resolveAccess('public').problems).toEqual([])
    expect(resolveAccess('user').problems).toEqual(['AUTH_002', 'AUTH_003', 'AUTH_004', 'AUTH_010', 'AUTH_015', 'API_KEY_SCOPE'])
    expect(resolveAccess({ audience: 'staff', apiKeyScope: 'sms:send' }).problems).toEqual([
      'AUTH_002',
      'AUTH_003',
      'AUTH_004',
      'AUTH_010',
      'AUTH_015',
      'API_KEY_SCOPE',
      'AUTH_008',
      'RATE_LIMITED',
    ])
    expect(resolveAccess('owner').problems).toContain('AUTH_008')
    expect(resolveAccess('internal-signed').problems).toEqual(['INTERNAL_SIGNATURE_INVALID', 'TENANT_MISMATCH', 'TENANT_NOT_FOUND'])
    expect(resolveAccess('provider-callback').problems).toEqual(['WEBHOOK_SECRET_INVALID'])
    expect(resolveAccess({ audience: 'public', addressBudget: 'AUTH_018' }).problems).toEqual(['AUTH_018'])
  })

  it('carries the address budget of the wrapped form', () => {
    expect(resolveAccess({ audience: 'user', addressBudget: 'RATE_LIMITED' })).toMatchObject({ credential: 'access-token', addressBudget: 'RATE_LIMITED' })
  })

  it.each([
    ['an unknown audience', 'admin'],
    ['no audience at all', undefined],
    ['an empty role list', { roles: [] }],
    ['a role list with more keys', { roles: ['OWNER'], tenant: false }],
    ['a budget with an unknown code', { audience: 'public', addressBudget: 'AUTH_001' }],
    ['a wrapped unknown audience', { audience: 'anyone', addressBudget: 'RATE_LIMITED' }],
    ['the old flag style', { auth: false }],
  ])('refuses %s', (_case, access) => {
    expect(() => resolveAccess(access)).toThrow(/not an access policy/)
  })

  it('gives a request that matched no route (no access) a policy that reads nothing', () => {
    expect(policyOf({})).toBe(UNROUTED)
    expect(UNROUTED).toMatchObject({ credential: 'none', tenantTransaction: false, csrfCookie: null })
  })

  it('resolves a route config once', () => {
    const config = { access: 'staff' as const }
    expect(policyOf(config)).toBe(policyOf(config))
  })
})
