import type { RouteOptions } from 'fastify'
import type { Role } from '../../db/schema.js'

/**
 * An onRoute hook for a subtree whose autohooks guard every route by role (`app.requireRoles`): the document then
 * names the roles and the guard's AUTH_008. Public routes are skipped, as the guard skips them.
 */
export function documentRoleGuard(roles: readonly Role[]) {
  return (route: RouteOptions): void => {
    if (route.config?.auth !== false) route.schema = { ...route.schema, allowedRoles: roles }
  }
}
