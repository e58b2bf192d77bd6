import { tenantFromPrefixedColumns } from '../../db/repos/tenant-prefixed-columns.js'
import { findTenantById } from '../../db/repos/tenancy/tenants.js'
import { findUserById, findUserWithTenant, type UserRecord } from '../../db/repos/tenancy/users.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import { toUserResponse, type UserResponse } from './user-response.js'

/**
 * The caller's own row. RLS limits the read to the token's tenant, so a token naming a user of another tenant
 * (or one that no longer exists) finds nothing and is refused like an invalid token.
 */
export async function findCurrentUser(trx: TenantTx, userId: number): Promise<UserRecord> {
  const user = await findUserById(trx, userId)
  if (!user) throw currentUserMissing()
  return user
}

export function currentUserMissing(): AppError {
  return new AppError('AUTH_003', 'The user of this access token does not exist.')
}

/**
 * The full user response. The tenant is read through the same transaction (tenants has no RLS): on the
 * embedded single-connection database a second handle would wait for this transaction forever.
 */
export async function toFullUserResponse(trx: TenantTx, user: UserRecord): Promise<UserResponse> {
  const tenant = await findTenantById(trx, user.tenantId)
  if (!tenant) throw new AppError('INTERNAL_ERROR', 'user without a tenant')
  return toUserResponse(user, tenant)
}

/** GET /v1/me's read: the caller and its tenant in one query (the hottest authenticated path). */
export async function currentUserResponse(trx: TenantTx, userId: number): Promise<UserResponse> {
  const row = await findUserWithTenant(trx, userId)
  if (!row) throw currentUserMissing()
  return toUserResponse(row, tenantFromPrefixedColumns(row))
}
