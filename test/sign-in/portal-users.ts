import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { Role } from '../../db/schema.js'
import { insertUserWithPassword, login, type RequestExtras } from '../support/auth-fixtures.js'
import { createTenant, unique } from '../support/fixtures.js'

/**
 * A user of a fresh tenant, with the credentials of the portal entry (login id, password, the tenant's customId).
 * `signIn` logs in with them and insists on 200, so a test never goes on with a failed login.
 */
export async function portalUser(app: FastifyInstance, options: { role?: Role } = {}) {
  const tenant = await createTenant()
  const user = await insertUserWithPassword(tenant, options)
  const credentials = { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }
  const signIn = async (extras: RequestExtras = {}) => {
    const result = await login(app, credentials, extras)
    expect(result.response.statusCode).toBe(200)
    return result
  }
  return { tenant, user, credentials, signIn }
}

/** Two tenants, each with a user of the same login id (login ids are unique per tenant only). */
export async function sameLoginIdInTwoTenants(prefix: string) {
  const a = await createTenant()
  const b = await createTenant()
  const loginId = unique(prefix)
  const inA = await insertUserWithPassword(a, { loginId })
  const inB = await insertUserWithPassword(b, { loginId })
  return { a, b, loginId, inA, inB }
}
