import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import type { UserRecord } from '../../db/repos/tenancy/users.js'
import type { Tenant } from '../../db/repos/tenancy/tenants.js'

export const RoleSchema = StringEnum(['OWNER', 'MANAGER', 'INSTRUCTOR', 'STUDENT'], { $id: 'Role' })

// The demo academy's owner (README "Try it"), as the OpenAPI examples show it.
const demoOwner = { id: 1, userLoginId: 'demo-owner', name: 'Kim Owner', role: 'OWNER', tenantSlug: 'demo-academy' }
const demoTenant = { tenantId: 1, tenantCustomId: 'DEMO2026', tenantCustomDomain: null, tenantOnboardingCompletedAt: null }
const exampleUser = {
  ...demoOwner,
  phone: '01020260001',
  phoneVerifiedAt: '2026-11-26T05:00:00.000Z',
  email: 'demo-owner',
  ...demoTenant,
  avatarSeed: 'q7Hc2LmX9aPe',
}

export const UserResponseSchema = Type.Object({
  id: Type.Integer(),
  userLoginId: Type.String(),
  name: Type.String(),
  phone: Nullable(Type.String()),
  // docs/api.md#phone-verification
  phoneVerifiedAt: Nullable(
    Type.String({ format: 'date-time', description: 'when the user proved this phone with a code; null until then, and again after any change of phone' }),
  ),
  // The login identity under a legacy name, not a verified e-mail address (docs/api.md#tenants-and-owners).
  email: Type.String(),
  role: RoleSchema,
  tenantSlug: Type.String(),
  tenantId: Type.Integer(),
  tenantCustomId: Type.String(),
  tenantCustomDomain: Nullable(Type.String()),
  tenantOnboardingCompletedAt: Nullable(Type.String({ format: 'date-time' })),
  avatarSeed: Type.String(),
}, { $id: 'User', examples: [exampleUser] })

export const MinimalUserSchema = Type.Object({
  id: Type.Integer(),
  userLoginId: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  tenantSlug: Type.String(),
}, { $id: 'UserSummary', examples: [demoOwner] })

export type UserResponse = Static<typeof UserResponseSchema>
export type MinimalUser = Static<typeof MinimalUserSchema>

export function toUserResponse(user: UserRecord, tenant: Tenant): UserResponse {
  return {
    id: user.id,
    userLoginId: user.userLoginId,
    name: user.name,
    phone: user.phone,
    phoneVerifiedAt: user.phoneVerifiedAt?.toISOString() ?? null,
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
