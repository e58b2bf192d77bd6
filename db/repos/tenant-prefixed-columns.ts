import type { Tenant } from './tenancy/tenants.js'

/**
 * A tenant as a joined read returns it beside another row (svc_current_user, svc_login_admit): every column
 * prefixed `tenant`, its id the row's `tenantId`.
 */
export interface TenantPrefixedColumns {
  tenantId: Tenant['id']
  tenantSlug: Tenant['slug']
  tenantCustomId: Tenant['customId']
  tenantCustomDomain: Tenant['customDomain']
  tenantName: Tenant['name']
  tenantStatus: Tenant['status']
  tenantOnboardingCompletedAt: Tenant['onboardingCompletedAt']
}

export function tenantFromPrefixedColumns(row: TenantPrefixedColumns): Tenant {
  return {
    id: row.tenantId,
    slug: row.tenantSlug,
    customId: row.tenantCustomId,
    customDomain: row.tenantCustomDomain,
    name: row.tenantName,
    status: row.tenantStatus,
    onboardingCompletedAt: row.tenantOnboardingCompletedAt,
  }
}
