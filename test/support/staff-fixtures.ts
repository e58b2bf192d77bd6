import type { FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { Role } from '../../db/schema.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { createTenant, insertUser, type TenantRow, type UserRow } from './fixtures.js'

export interface Actor {
  user: UserRow
  tenant: TenantRow
  /** `authorization: Bearer <access token>` for app.inject. */
  headers: { authorization: string }
}

/**
 * A user of `role` in `tenant` with a signed access token, without the cost of a bcrypt login. The token is
 * as real as a login's (same signer, claims and issuer); tests of login itself live under test/sign-in.
 */
export async function actor(app: FastifyInstance, tenant: TenantRow, role: Role): Promise<Actor> {
  const user = await insertUser(tenant, { role })
  const { access } = await issueTokenPair(
    app.tokenKeys,
    { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug, role, sid: randomUUID() },
    { accessSeconds: 3600, refreshSeconds: 7200 },
  )
  return { user, tenant, headers: { authorization: `Bearer ${access.token}` } }
}

/** A fresh tenant with one actor per staff role and a student. */
export async function academy(app: FastifyInstance) {
  const tenant = await createTenant()
  const [owner, manager, instructor, student] = await Promise.all(
    (['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'] as const).map((role) => actor(app, tenant, role)),
  )
  return { tenant, owner: owner!, manager: manager!, instructor: instructor!, student: student! }
}
