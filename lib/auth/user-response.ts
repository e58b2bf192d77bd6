import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import type { UserRecord } from '../../db/repos/users.js'
import type { Tenant } from '../../db/repos/tenants.js'

export const RoleSchema = StringEnum(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'])

export const UserResponseSchema = Type.Object({
  id: Type.Integer(),
  userLoginId: Type.String(),
  name: Type.String(),
  phone: Nullable(Type.String()),
  // The login identity under a legacy name, not a verified e-mail address (docs/api.md#tenants-and-owners).
  email: Type.String(),
  role: RoleSchema,
  tenantSlug: Type.String(),
  tenantId: Type.Integer(),
  tenantCustomId: Type.String(),
  tenantCustomDomain: Nullable(Type.String()),
  tenantOnboardingCompletedAt: Nullable(Type.String({ format: 'date-time' })),
  avatarSeed: Type.String(),
})

export const MinimalUserSchema = Type.Object({
  id: Type.Integer(),
  userLoginId: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  tenantSlug: Type.String(),
})

export type UserResponse = Static<typeof UserResponseSchema>
export type MinimalUser = Static<typeof MinimalUserSchema>

export function toUserResponse(user: UserRecord, tenant: Tenant): UserResponse {
  return {
    id: user.id,
    userLoginId: user.userLoginId,
    name: user.name,
    phone: user.phone,
    email: user.userLoginId,
    role: user.role,
    tenantSlug: tenant.slug,
    tenantId: tenant.id,
    tenantCustomId: tenant.customId,
    tenantCustomDomain: tenant.customDomain,
    tenantOnboardingCompletedAt: tenant.onboardingCompletedAt?.toISOString() ?? null,
    avatarSeed: user.avatarSeed,
  }
}

export function toMinimalUser(user: UserRecord, tenant: Pick<Tenant, 'slug'>): MinimalUser {
  return { id: user.id, userLoginId: user.userLoginId, name: user.name, role: user.role, tenantSlug: tenant.slug }
}
