import type { Kysely } from 'kysely'
import { deleteUserPasskeys } from '../../db/repos/passkeys/passkeys.js'
import { passkeyRemoved } from '../passkeys/events.js'
import { revokeSessions } from '../../db/repos/sign-in/sessions.js'
import { findTenantById } from '../../db/repos/tenancy/tenants.js'
import {
  changeUserLoginId,
  findAvatarSeeds,
  findUserById,
  insertUser,
  updatePasswordHash,
  updateUserStatus,
} from '../../db/repos/tenancy/users.js'
import type { DB, Role } from '../../db/schema.js'
import { violatedUniqueConstraint } from '../../db/errors.js'
import { NO_ORIGIN, recordAuditEvent } from '../audit/record.js'
import type { Env } from '../env.js'
import { AppError } from '../errors.js'
import { generateAvatarSeed, generateLoginId, generateTemporaryPassword, hasUnsafeCharacters } from './identifiers.js'
import { loginIdChanged, passwordReset, userCreated, userDeleted } from '../sign-in/account-events.js'
import type { CreatableRole, CreatedUser, NewUser } from '../sign-in/contract-types.js'
import { normalizeOptionalPhone } from '../account-security/phone/optional-phone.js'
import { hashPassword } from '../sign-in/password-hash.js'
import { inTenant, type TenantScope } from '../sign-in/tenant-scope.js'

/** User administration needs no token signer, so scripts can run it with a database and settings only. */
export interface UserAdminDeps {
  db: Kysely<DB>
  env: Pick<Env, 'SVC_BCRYPT_COST'>
}

// Every change here is audited in the transaction that makes it, with NO_ORIGIN: the callers (other modules of the
// service, operations scripts) are no signed-in user, and no request of theirs reaches this interface.

// Owners exist only with their tenant (POST /v1/register/owner), which also writes the owner directory.
export const CREATABLE_ROLES: readonly CreatableRole[] = ['MANAGER', 'INSTRUCTOR', 'STUDENT']

// name max 100, userLoginId max 50 (docs/api.md#login-ids-and-names); counted in characters like the varchar columns.
const NAME_MAX = 100
const LOGIN_ID_MAX = 50

function invalid(field: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', `${field} ${message}`, { errors: [{ field, message }] })
}

function userNotFound(userId: number): AppError {
  return new AppError('NOT_FOUND', `No user with id ${userId} in this tenant.`)
}

export async function createUser(deps: UserAdminDeps, scope: TenantScope, user: NewUser): Promise<CreatedUser> {
  if (typeof user.name !== 'string' || user.name.trim() === '' || [...user.name].length > NAME_MAX) {
    throw invalid('name', `must be 1-${NAME_MAX} characters and not blank`)
  }
  if (hasUnsafeCharacters(user.name)) throw invalid('name', 'must not contain control, format or unassigned characters')
  if (!(CREATABLE_ROLES as readonly Role[]).includes(user.role)) throw invalid('role', `must be one of ${CREATABLE_ROLES.join(', ')}`)
  const phone = normalizeOptionalPhone(user.phone)
  // 8 random characters of 36: a collision within one tenant is too unlikely to retry for.
  const userLoginId = generateLoginId(`${user.role.toLowerCase()}-`)
  const temporaryPassword = generateTemporaryPassword(userLoginId)
  const passwordHash = await hashPassword(temporaryPassword, deps.env.SVC_BCRYPT_COST)
  const created = await inTenant(deps.db, scope, async (trx, tenantId) => {
    if (!(await findTenantById(trx, tenantId))) throw new AppError('TENANT_NOT_FOUND', `No tenant with id ${tenantId}.`)
    const inserted = await insertUser(trx, {
      tenantId,
      userLoginId,
      passwordHash,
      name: user.name,
      phone,
      role: user.role,
      avatarSeed: generateAvatarSeed(),
    })
    await recordAuditEvent(trx, tenantId, NO_ORIGIN, userCreated(inserted.id, inserted.role))
    return inserted
  })
  return { userId: created.id, userLoginId, temporaryPassword }
}

/** Status DELETED and every session ended; the login id, owner-directory entry and data stay (nothing is freed). */
export async function deleteUser(deps: UserAdminDeps, scope: TenantScope, userId: number): Promise<void> {
  await inTenant(deps.db, scope, async (trx, tenantId) => {
    if (!(await updateUserStatus(trx, userId, 'DELETED'))) throw userNotFound(userId)
    const ended = await revokeSessions(trx, { userId }, 'USER_DELETED')
    await recordAuditEvent(trx, tenantId, NO_ORIGIN, userDeleted(userId, ended.length))
    // A deleted user signs in with nothing: the passkeys go (and, by their trigger, their directory entries), so
    // no credential keeps pointing at the account. The login id stays taken, as the contract says.
    const removed = await deleteUserPasskeys(trx, { tenantId, userId })
    if (removed > 0) await recordAuditEvent(trx, tenantId, NO_ORIGIN, passkeyRemoved(userId, { deletedUser: removed }))
  })
}

export async function resetPassword(deps: UserAdminDeps, scope: TenantScope, userId: number): Promise<string> {
  const user = await inTenant(deps.db, scope, (trx) => findUserById(trx, userId))
  if (!user) throw userNotFound(userId)
  // Hashed between two short transactions, so no connection or row lock waits on bcrypt.
  const temporaryPassword = generateTemporaryPassword(user.userLoginId)
  const passwordHash = await hashPassword(temporaryPassword, deps.env.SVC_BCRYPT_COST)
  await inTenant(deps.db, scope, async (trx, tenantId) => {
    await updatePasswordHash(trx, userId, passwordHash)
    const ended = await revokeSessions(trx, { userId }, 'PASSWORD_RESET')
    await recordAuditEvent(trx, tenantId, NO_ORIGIN, passwordReset(userId, ended.length))
  })
  return temporaryPassword
}

export async function changeLoginId(
  deps: UserAdminDeps,
  scope: TenantScope,
  userId: number,
  newLoginId: string,
): Promise<void> {
  if (typeof newLoginId !== 'string' || !/^\S+$/.test(newLoginId) || [...newLoginId].length > LOGIN_ID_MAX) {
    throw invalid('newLoginId', `must be 1-${LOGIN_ID_MAX} characters without whitespace`)
  }
  if (hasUnsafeCharacters(newLoginId)) {
    throw invalid('newLoginId', 'must not contain control, format (zero-width, bidi) or unassigned characters')
  }
  await inTenant(deps.db, scope, async (trx, tenantId) => {
    const user = await findUserById(trx, userId)
    if (!user) throw userNotFound(userId)
    // Unchanged: nothing to keep in step, and no reason to sign the user out.
    if (user.userLoginId === newLoginId) return
    try {
      await changeUserLoginId(trx, userId, newLoginId)
    } catch (error) {
      // Taken in this tenant, or (for an owner) by any owner in the directory, as typed or after NFKC and case
      // folding (the login key).
      if (violatedUniqueConstraint(error) !== null) throw new AppError('AUTH_011')
      throw error
    }
    await revokeSessions(trx, { userId }, 'LOGIN_ID_CHANGED')
    await recordAuditEvent(trx, tenantId, NO_ORIGIN, loginIdChanged(userId, user.userLoginId, newLoginId))
  })
}

export async function getAvatarSeeds(
  deps: UserAdminDeps,
  scope: TenantScope,
  userIds: readonly number[],
): Promise<Map<number, string>> {
  const ids = [...new Set(userIds)].filter((id) => Number.isSafeInteger(id) && id > 0)
  if (ids.length === 0) return new Map()
  const rows = await inTenant(deps.db, scope, (trx) => findAvatarSeeds(trx, ids))
  return new Map(rows.map((row) => [row.id, row.avatarSeed]))
}
