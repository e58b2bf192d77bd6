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

export interface DB {
  tenants: TenantsTable
  ownerDirectory: OwnerDirectoryTable
  users: UsersTable
}
