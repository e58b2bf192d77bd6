import type { Role } from '../../db/schema.js'
import type { AuthDeps } from './deps.js'
import type { TenantScope } from './tenant-scope.js'
import { getUserInfo, validateToken } from './token-identity.js'
import * as admin from './user-admin.js'
import type { UserAdminDeps } from './user-admin.js'

/**
 * The in-process contract other modules of this service use instead of HTTP (SPEC "In-process contract",
 * DECISIONS section 3). Import it from here only; the Fastify app exposes one instance as `app.authContract`.
 *
 * - Every user-administration call takes its tenant explicitly as the first argument (a tenant id, or
 *   `{ tenantId, trx }` to join a transaction the caller holds) and runs only inside that tenant's RLS context;
 *   SPEC's `deleteUser(userId)` is `deleteUser(tenantId, userId)` here, and `createUser(name, phone, role,
 *   tenantId)` is `createUser(tenantId, { name, phone, role })`.
 * - Token calls take the raw access token (no `Bearer ` prefix) and use the tenant the token names.
 * - Failures throw the catalog's AppError, the same codes the HTTP layer answers: AUTH_003/AUTH_004 for tokens,
 *   VALIDATION_FAILED, INVALID_PHONE_NUMBER, AUTH_011, TENANT_NOT_FOUND, and NOT_FOUND for a user id that does not
 *   exist in the tenant.
 */
export interface AuthContract extends UserAdministration {
  /** The identity of a valid, unrevoked access token; AUTH_003 when invalid or expired, AUTH_004 when revoked. */
  validateToken(token: string): Promise<TokenIdentity>
  /** validateToken plus the user's current name and role. */
  getUserInfo(token: string): Promise<UserInfo>
}

export interface UserAdministration {
  /** Generates the login id and a temporary password (returned once, never stored in clear). OWNER is refused. */
  createUser(scope: TenantScope, user: NewUser): Promise<CreatedUser>
  /** Status DELETED, every session ended (USER_DELETED). Frees nothing: the login id stays taken. */
  deleteUser(scope: TenantScope, userId: number): Promise<void>
  /** Sets and returns a new temporary password; every session ends (PASSWORD_RESET). */
  resetPassword(scope: TenantScope, userId: number): Promise<string>
  /** AUTH_011 when taken; an owner's directory entry changes in the same transaction; sessions end (LOGIN_ID_CHANGED). */
  changeLoginId(scope: TenantScope, userId: number, newLoginId: string): Promise<void>
  /** One query for all ids; ids unknown in the tenant are absent from the map. */
  getAvatarSeeds(scope: TenantScope, userIds: readonly number[]): Promise<Map<number, string>>
}

export type { TenantScope }

export interface TokenIdentity {
  userId: number
  tenantId: number
  tenantSlug: string
  role: Role
  sid: string
  jti: string
  expiresAt: Date
}

export interface UserInfo {
  id: number
  /** Holds the login id, not an e-mail address (SPEC Versioning item 2); kept until the interface changes. */
  email: string
  name: string
  role: Role
  tenantSlug: string
  tenantId: number
}

export type CreatableRole = Exclude<Role, 'OWNER'>

export interface NewUser {
  name: string
  /** Any valid Korean number; stored as national digits. Omitted, null or blank: no phone. */
  phone?: string | null
  role: CreatableRole
}

export interface CreatedUser {
  userId: number
  userLoginId: string
  temporaryPassword: string
}

/** User administration without a token signer (operations scripts). */
export function createUserAdministration(deps: UserAdminDeps): UserAdministration {
  return {
    createUser: (scope, user) => admin.createUser(deps, scope, user),
    deleteUser: (scope, userId) => admin.deleteUser(deps, scope, userId),
    resetPassword: (scope, userId) => admin.resetPassword(deps, scope, userId),
    changeLoginId: (scope, userId, newLoginId) => admin.changeLoginId(deps, scope, userId, newLoginId),
    getAvatarSeeds: (scope, userIds) => admin.getAvatarSeeds(deps, scope, userIds),
  }
}

export function createAuthContract(deps: AuthDeps): AuthContract {
  return {
    ...createUserAdministration(deps),
    validateToken: (token) => validateToken(deps, token),
    getUserInfo: (token) => getUserInfo(deps, token),
  }
}
