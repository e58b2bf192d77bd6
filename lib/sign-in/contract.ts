import type { Role } from '../../db/schema.js'
import { AppError } from '../errors.js'
import type { CreatedUser, TokenIdentity, UserInfo } from './contract-types.js'
import type { AuthDeps } from './deps.js'
import type { TenantScope } from './tenant-scope.js'
import { getUserInfo, validateToken } from './token-identity.js'
import * as admin from '../tenancy/user-admin.js'
import type { UserAdminDeps } from '../tenancy/user-admin.js'

/**
 * The in-process contract other modules of this service use instead of HTTP (docs/clients.md#in-process-auth-contract),
 * with the call shapes those modules are written against. Import it from here only; the Fastify app exposes one
 * instance as `app.authContract`.
 *
 * - The tenant context is explicit: `forTenant(scope)` binds the contract to a tenant id (each call
 *   opens and commits its own tenant transaction) or to `{ tenantId, trx }` (each call joins a transaction the
 *   caller holds), and the bound contract offers every call: `deleteUser(userId)`, `resetPassword(userId)`,
 *   `changeLoginId(userId, newLoginId)`, `getAvatarSeeds(userIds)`, `createUser(name, phone, role, tenantId)`.
 *   `createUser` names its tenant itself, so it is also offered unbound; bound, a tenant id other than the bound
 *   one is refused (TENANT_MISMATCH) rather than written outside the caller's context.
 * - Token calls take the raw access token (no `Bearer ` prefix) and use the tenant the token names.
 * - Failures throw the catalog's AppError, the same codes the HTTP layer answers: AUTH_003/AUTH_004 for tokens,
 *   VALIDATION_FAILED, INVALID_PHONE_NUMBER, AUTH_011, TENANT_NOT_FOUND, TENANT_MISMATCH, and NOT_FOUND for a user
 *   id that does not exist in the tenant.
 */
export interface AuthContract extends TokenCalls, UserAdministration {
  forTenant(scope: TenantScope): TenantAuthContract
}

/** The whole contract for one tenant context. */
export interface TenantAuthContract extends TokenCalls, TenantUserAdministration {}

export interface TokenCalls {
  /** The identity of a valid, unrevoked access token; AUTH_003 when invalid or expired, AUTH_004 when revoked. */
  validateToken(token: string): Promise<TokenIdentity>
  /** validateToken plus the user's current name and role. */
  getUserInfo(token: string): Promise<UserInfo>
}

/** createUser, which names its tenant; `forTenant` gives the calls that need a tenant context. */
export interface UserAdministration {
  createUser: CreateUser
  forTenant(scope: TenantScope): TenantUserAdministration
}

export interface TenantUserAdministration {
  createUser: CreateUser
  /** Status DELETED, every session ended (USER_DELETED), every passkey removed. Frees nothing: the login id stays taken. */
  deleteUser(userId: number): Promise<void>
  /** Sets and returns a new temporary password; every session ends (PASSWORD_RESET). Passkeys stay. */
  resetPassword(userId: number): Promise<string>
  /** AUTH_011 when taken; an owner's directory entry changes in the same transaction; sessions end (LOGIN_ID_CHANGED). */
  changeLoginId(userId: number, newLoginId: string): Promise<void>
  /** One query for all ids; ids unknown in the tenant are absent from the map. */
  getAvatarSeeds(userIds: readonly number[]): Promise<Map<number, string>>
}

/**
 * Generates the login id and a temporary password (returned once, never stored in clear). The phone may be null,
 * undefined or blank (no phone). OWNER is refused at run time (VALIDATION_FAILED): owners come only with their tenant.
 */
export type CreateUser = (name: string, phone: string | null | undefined, role: Role, tenantId: number) => Promise<CreatedUser>

export type { TenantScope }
export type { CreatableRole, CreatedUser, NewUser, TokenIdentity, UserInfo } from './contract-types.js'

/** User administration without a token signer (operations scripts). */
export function createUserAdministration(deps: UserAdminDeps): UserAdministration {
  return {
    createUser: (name, phone, role, tenantId) => admin.createUser(deps, tenantId, { name, phone, role }),
    forTenant: (scope) => tenantUserAdministration(deps, scope),
  }
}

function tenantUserAdministration(deps: UserAdminDeps, scope: TenantScope): TenantUserAdministration {
  const boundTenantId = typeof scope === 'number' ? scope : scope.tenantId
  return {
    createUser: (name, phone, role, tenantId) => {
      if (tenantId !== boundTenantId) {
        return Promise.reject(new AppError('TENANT_MISMATCH', `tenantId ${tenantId} is not the bound tenant ${boundTenantId}.`))
      }
      return admin.createUser(deps, scope, { name, phone, role })
    },
    deleteUser: (userId) => admin.deleteUser(deps, scope, userId),
    resetPassword: (userId) => admin.resetPassword(deps, scope, userId),
    changeLoginId: (userId, newLoginId) => admin.changeLoginId(deps, scope, userId, newLoginId),
    getAvatarSeeds: (userIds) => admin.getAvatarSeeds(deps, scope, userIds),
  }
}

export function createAuthContract(deps: AuthDeps): AuthContract {
  const tokens: TokenCalls = {
    validateToken: (token) => validateToken(deps, token),
    getUserInfo: (token) => getUserInfo(deps, token),
  }
  const users = createUserAdministration(deps)
  return {
    ...tokens,
    createUser: users.createUser,
    forTenant: (scope) => ({ ...tokens, ...users.forTenant(scope) }),
  }
}
