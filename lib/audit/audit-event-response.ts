import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import { AUDIT_TOTAL_CAP } from './audit-log-page.js'
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
    page: Type.Integer({ description: 'Zero-based: the page asked for, or the page the cursor leads to' }),
    perPage: Type.Integer(),
    total: Type.Integer({
      description: `Events the filters match, counted exactly up to ${AUDIT_TOTAL_CAP.toLocaleString('en')}; beyond, ${AUDIT_TOTAL_CAP.toLocaleString('en')} and totalExact false`,
    }),
    totalExact: Type.Boolean({ description: `False when more than ${AUDIT_TOTAL_CAP.toLocaleString('en')} events match: total and totalPages are then lower bounds` }),
    totalPages: Type.Integer({ description: 'ceil(total / perPage): a lower bound when totalExact is false' }),
    hasNext: Type.Boolean({ description: 'Whether an event follows this page (always exact)' }),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page, which then costs the same however deep; null on the last page' }),
    ),
  },
  { $id: 'AuditEventPage' },
)
export type AuditEventPage = Static<typeof AuditEventPageSchema>
