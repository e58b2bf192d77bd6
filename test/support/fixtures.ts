import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { inject } from 'vitest'
import { createPool, kyselyOver } from '../../db/database.js'
import type { DB, Role, TenantStatus, UserStatus } from '../../db/schema.js'
import { embeddedStore, isEmbedded } from './helper.js'

let ownerDb: Kysely<DB> | undefined

/**
 * The migrating (owner) connection: fixtures write through it, bypassing RLS, as an operator would. On the embedded
 * store it shares the file's one session (each statement borrows it), so never await it inside an open runtime
 * transaction there.
 */
export function owner(): Kysely<DB> {
  ownerDb ??= isEmbedded ? embeddedStore().owner : kyselyOver(createPool(inject('databaseUrl'), 2))
  return ownerDb
}

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`
}

export interface TenantRow {
  id: number
  slug: string
  customId: string
  name: string
  status: TenantStatus
}

export async function createTenant(options: { status?: TenantStatus } = {}): Promise<TenantRow> {
  const slug = unique('t')
  return owner()
    .insertInto('tenants')
    .values({
      slug,
      customId: slug.slice(2, 12).toUpperCase(),
      name: `Academy ${slug}`,
      status: options.status ?? 'ACTIVE',
      updatedAt: new Date(),
    })
    .returning(['id', 'slug', 'customId', 'name', 'status'])
    .executeTakeFirstOrThrow()
}

export interface UserRow {
  id: number
  tenantId: number
  userLoginId: string
  role: Role
  name: string
}

export async function insertUser(
  tenant: { id: number },
  options: { role?: Role; status?: UserStatus; passwordHash?: string; loginId?: string; legacyLoginKeyDuplicate?: boolean } = {},
): Promise<UserRow> {
  return owner()
    .insertInto('users')
    .values({
      tenantId: tenant.id,
      userLoginId: options.loginId ?? unique('user'),
      passwordHash: options.passwordHash ?? '$2b$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinva',
      name: 'Test User',
      role: options.role ?? 'STUDENT',
      status: options.status ?? 'ACTIVE',
      avatarSeed: unique('seed'),
      ...(options.legacyLoginKeyDuplicate ? { legacyLoginKeyDuplicate: true } : {}),
      updatedAt: new Date(),
    })
    .returning(['id', 'tenantId', 'userLoginId', 'role', 'name'])
    .executeTakeFirstOrThrow()
}
