import type { FastifyInstance } from 'fastify'
import { STAFF_ROLES } from '../../../plugins/auth.js'

// SPEC Authentication item 6: everything under /v1/sms-templates is for staff (OWNER, MANAGER, INSTRUCTOR).
export default async function staffOnly(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', app.requireRoles(STAFF_ROLES))
}
