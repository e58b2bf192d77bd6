import type { FastifyInstance } from 'fastify'
import { documentRoleGuard } from '../../../lib/openapi/guarded-roles.js'
import { wellFormedJson } from '../../../lib/text/well-formed.js'
import { STAFF_ROLES } from '../../../plugins/auth.js'

// Everything under /v1/sms is for staff (OWNER, MANAGER, INSTRUCTOR).
export default async function staffOnly(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', app.requireRoles(STAFF_ROLES))
  app.addHook('onRoute', documentRoleGuard(STAFF_ROLES))
  // Before validation and every handler: what is validated, stored and echoed is the same text (finding 9b).
  app.addHook('preValidation', async (request) => {
    request.body = wellFormedJson(request.body)
  })
}
