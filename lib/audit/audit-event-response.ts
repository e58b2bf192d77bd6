import { Type, type Static } from '@sinclair/typebox'
import type { AuditEventRecord } from '../../db/repos/audit-events.js'
import { Nullable, StringEnum } from '../http/response-types.js'
import { AUDIT_EVENT_TYPES } from './event-types.js'

export const AuditEventTypeSchema = StringEnum(AUDIT_EVENT_TYPES, { $id: 'AuditEventType' })

export const AuditEventSchema = Type.Object(
  {
    id: Type.Integer(),
    type: AuditEventTypeSchema,
    occurredAt: Type.String({ format: 'date-time' }),
    actorId: Nullable(Type.Integer({ description: 'The signed-in user who acted; null for anonymous or operations acts' })),
    targetType: Nullable(Type.String({ examples: ['USER', 'SMS_MESSAGE'] })),
    targetId: Nullable(Type.String({ description: 'The id of what changed, as text (a session id is a UUID)' })),
    ipAddress: Nullable(Type.String()),
    requestId: Nullable(Type.String()),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What changed; never a password, code, token, secret or whole phone number',
    }),
  },
  { $id: 'AuditEvent' },
)

export const AuditEventPageSchema = Type.Object(
  {
    items: Type.Array(AuditEventSchema),
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer(),
    totalPages: Type.Integer(),
    hasNext: Type.Boolean(),
  },
  { $id: 'AuditEventPage' },
)
export type AuditEventPage = Static<typeof AuditEventPageSchema>

export function toAuditEventPage(records: AuditEventRecord[], page: number, perPage: number, total: number): AuditEventPage {
  const totalPages = Math.ceil(total / perPage)
  return {
    items: records.map((record) => ({ ...record, occurredAt: record.occurredAt.toISOString() })),
    page,
    perPage,
    total,
    totalPages,
    hasNext: page + 1 < totalPages,
  }
}
