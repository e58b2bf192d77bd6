import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { AuditEventFilter } from '../../db/repos/audit/audit-events.js'
import { decodeAuditCursor, type AuditCursor } from '../../lib/audit/audit-cursor.js'
import { AuditEventPageSchema, AuditEventTypeSchema } from '../../lib/audit/audit-event-response.js'
import { readAuditLogPage } from '../../lib/audit/audit-log-page.js'
import { AppError } from '../../lib/errors.js'
import { ProblemSchema } from '../../lib/http/problem-schema.js'

const Instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }))

const AuditEventsQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  type: Type.Optional(AuditEventTypeSchema),
  actorId: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  from: Instant('Events at or after this instant (ISO 8601)'),
  to: Instant('Events before this instant (ISO 8601)'),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]+$',
      maxLength: 64,
      description: 'The nextCursor of an earlier answer: the page after it, in the same time however deep; page is then ignored',
    }),
  ),
})

/** The schema admits RFC 3339 shapes Date cannot represent (a leap second): refused as input, never a 500. */
function instant(field: 'from' | 'to', value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const at = new Date(value)
  if (Number.isNaN(at.getTime())) {
    throw new AppError('VALIDATION_FAILED', `${field} is not a valid instant.`, {
      errors: [{ field, message: 'must be an ISO 8601 timestamp' }],
    })
  }
  return at
}

/** A cursor is opaque to clients: one this service did not write is refused as input, never a 500. */
function cursorOf(value: string | undefined): AuditCursor | undefined {
  if (value === undefined) return undefined
  const cursor = decodeAuditCursor(value)
  if (!cursor) {
    throw new AppError('VALIDATION_FAILED', 'cursor is not a cursor of this audit log.', {
      errors: [{ field: 'cursor', message: 'must be the nextCursor of an earlier answer' }],
    })
  }
  return cursor
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-events',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'listAuditEvents',
        summary: "The academy's audit log, newest first (OWNER)",
        tags: ['audit'],
        querystring: AuditEventsQuerySchema,
        response: { 200: AuditEventPageSchema, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema },
      },
    },
    async (request) => {
      const { page, size, type, actorId } = request.query
      const filter: AuditEventFilter = {
        tenantId: request.caller.tenantId,
        type,
        actorId,
        from: instant('from', request.query.from),
        to: instant('to', request.query.to),
      }
      return readAuditLogPage(request.db, filter, { page, size, cursor: cursorOf(request.query.cursor) })
    },
  )
}

export default routes
