import type { Role } from '../../db/schema.js'
import type { Identity } from './identity.js'

/**
 * The values the in-process contract (contract.ts) takes and returns. They live apart from the contract so that
 * its implementations (token-identity.ts, user-admin.ts) can use them without importing the contract that imports
 * them; other modules import them from contract.ts.
 */

/**
 * validateToken's answer: the verified caller (identity.ts) under the names the contract has always published,
 * `expiresAt` for the access token's expiry and no `authority`, so modules written against it keep working.
 */
export type TokenIdentity = Omit<Identity, 'authority' | 'accessExpiresAt' | 'apiKeyId'> & { expiresAt: Identity['accessExpiresAt'] }

export interface UserInfo {
  id: number
  /** Holds the login id, not an e-mail address: a known mismatch, kept until the interface changes. */
  email: string
  name: string
  role: Role
  tenantSlug: string
  tenantId: number
}

export type CreatableRole = Exclude<Role, 'OWNER'>

/** createUser's arguments inside the service (lib/tenancy/user-admin.ts). */
export interface NewUser {
  name: string
  /** Any valid Korean number; stored as national digits. Omitted, null or blank: no phone. */
  phone?: string | null
  /** OWNER is refused at run time (VALIDATION_FAILED). */
  role: Role
}

export interface CreatedUser {
  userId: number
  userLoginId: string
  temporaryPassword: string
}
