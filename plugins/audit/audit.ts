import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { auditOriginOf } from '../../lib/audit/origin.js'
import { recordAuditEvent, type AuditEvent } from '../../lib/audit/record.js'
import { AppError } from '../../lib/errors.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Records an audit event in the request's tenant transaction (request.db), so it commits with the change or not
     * at all. The actor is the signed-in caller (null on a signed operations call), with the request's address and id.
     */
    audit(event: AuditEvent): Promise<void>
  }
}

export default fp(
  async (app) => {
    app.decorateRequest('audit', async function audit(this: FastifyRequest, event: AuditEvent) {
      if (this.tenantId === null) throw new AppError('INTERNAL_ERROR', 'an audit event needs the request tenant')
      await recordAuditEvent(this.db, this.tenantId, auditOriginOf(this), event)
    })
  },
  { name: 'request-audit', dependencies: ['tenant-tx', 'auth'] },
)
