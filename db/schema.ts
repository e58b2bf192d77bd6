import type { ColumnType, Generated } from 'kysely'

/** Timestamps are written as Date or SQL defaults and always read back as Date. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>

export type TenantStatus = 'ACTIVE' | 'SUSPENDED' | 'CLOSED'
export type Role = 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT'
export type UserStatus = 'ACTIVE' | 'SUSPENDED' | 'DELETED'

// tenants: no RLS. It is read before any tenant context exists (login, registration, internal calls).
export interface TenantsTable {
  id: Generated<number>
  slug: string
  customId: string
  customDomain: string | null
  name: string
  businessRegistrationNumber: string | null
  status: ColumnType<TenantStatus, TenantStatus | undefined, TenantStatus>
  onboardingCompletedAt: NullableTimestamp
  createdAt: Generated<Date>
  updatedAt: Timestamp
}

// owner_directory: no RLS. Maps an OWNER's login id to the tenant for root-entry login.
export interface OwnerDirectoryTable {
  userLoginId: string
  tenantId: number
  userId: number
  createdAt: Generated<Date>
}

export interface UsersTable {
  id: Generated<number>
  tenantId: number
  userLoginId: string
  passwordHash: string
  name: string
  phone: string | null
  role: Role
  status: ColumnType<UserStatus, UserStatus | undefined, UserStatus>
  avatarSeed: string
  createdAt: Generated<Date>
  updatedAt: Timestamp
}

export type DeviceCategory = 'WEB' | 'MOBILE' | 'TABLET' | 'DESKTOP'

export interface SessionsTable {
  tenantId: number
  sid: string
  userId: number
  deviceCategory: DeviceCategory
  userAgent: string | null
  ipAddress: string | null
  accessJti: string
  accessExpiresAt: Timestamp
  refreshJti: string
  refreshExpiresAt: Timestamp
  createdAt: Generated<Date>
  lastRefreshedAt: NullableTimestamp
}

export type RevocationReason =
  | 'SESSION_REPLACED_BY_LOGIN'
  | 'LOGOUT'
  | 'LOGOUT_ALL'
  | 'REVOKED_BY_USER'
  | 'PASSWORD_CHANGED'
  | 'PASSWORD_RESET'
  | 'LOGIN_ID_CHANGED'
  | 'USER_DELETED'
  | 'REFRESH_TOKEN_REUSED'

export interface SessionRevocationsTable {
  tenantId: number
  sid: string
  reason: RevocationReason
  expiresAt: Timestamp
  createdAt: Generated<Date>
}

// No tenant_id and no RLS: random token ids only (see the auth-sessions migration).
export interface RevokedAccessTokensTable {
  jti: string
  expiresAt: Timestamp
}

export interface LoginFailuresTable {
  scope: string
  loginId: string
  failures: number
  lockedUntil: NullableTimestamp
  updatedAt: Timestamp
}

export interface RateLimitWindowsTable {
  key: string
  windowStart: Timestamp
  hits: number
}

export interface DB {
  tenants: TenantsTable
  ownerDirectory: OwnerDirectoryTable
  users: UsersTable
  sessions: SessionsTable
  sessionRevocations: SessionRevocationsTable
  revokedAccessTokens: RevokedAccessTokensTable
  loginFailures: LoginFailuresTable
  rateLimitWindows: RateLimitWindowsTable
}
