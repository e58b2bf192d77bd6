import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { PathIdSchema } from '../../../lib/http/id-schema.js'

// Ids are bigint in the database; anything past 2^53 could not be represented exactly, so it is refused as input.
const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const NonBlank = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' })
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const IdParamsSchema = Type.Object({ id: PathIdSchema })
export const ClassParamsSchema = Type.Object({ classId: PathIdSchema })

/** Declared for the documentation; its presence and shape are enforced by the idempotency plugin. */
export const IdempotencyHeadersSchema = Type.Object({ 'idempotency-key': Type.Optional(Type.String()) })

// Field sizes follow the columns. The phone has no schema limit: lib/sms/phone.ts judges it, an over-long one
// included, so every bad phone answers INVALID_PHONE_NUMBER with its index; the body limit bounds it.
export const RecipientSchema = Type.Object(
  {
    phone: Type.String(),
    name: Optional(Type.String({ maxLength: 100 })),
    studentId: Optional(Id),
    className: Optional(Type.String({ maxLength: 100 })),
    recipientRole: Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: false },
)

// No maxItems: the 4 MiB body limit bounds the array, and the count rule answers with its own code
// (RECIPIENTS_REQUIRED for none, TOO_MANY_RECIPIENTS above 10,000) instead of a generic schema failure.
const Recipients = Type.Array(RecipientSchema)

// No maxLength on content either: its limit is in provider bytes of the longest rendering (CONTENT_TOO_LONG).
const messageFields = {
  title: NonBlank(200),
  content: Type.String({ minLength: 1, pattern: '\\S' }),
  templateId: Optional(Id),
  scheduledAt: Optional(Type.String({ format: 'date-time' })),
}

// `null` counts as absent for either source, as many JSON serialisers write unset fields that way.
export const SendBodySchema = Type.Object(
  { recipients: Optional(Recipients), recipientGroupId: Optional(Id), ...messageFields },
  { additionalProperties: false },
)
export type SendBody = Static<typeof SendBodySchema>

export const ClassSendBodySchema = Type.Object(messageFields, { additionalProperties: false })
export type ClassSendBody = Static<typeof ClassSendBodySchema>

export const CreateGroupBodySchema = Type.Object(
  { name: NonBlank(100), icon: Optional(Type.String({ maxLength: 50 })), recipients: Recipients },
  { additionalProperties: false },
)
export type CreateGroupBody = Static<typeof CreateGroupBodySchema>

export const SMS_STATUSES = ['PENDING', 'DISPATCHED', 'SENT', 'FAILED', 'PARTIAL', 'CANCELLED'] as const

/** `field` or `field,asc|desc` over the allowed fields; anything else is VALIDATION_FAILED. */
export const HISTORY_SORT_PATTERN = '^(createdAt|sentAt|status)(,([aA][sS][cC]|[dD][eE][sS][cC]))?$'

export const HistoryQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Union(SMS_STATUSES.map((status) => Type.Literal(status)))),
  recipientType: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  q: Type.Optional(Type.String({ maxLength: 100 })),
  sort: Type.String({ pattern: HISTORY_SORT_PATTERN, default: 'createdAt,desc' }),
})
export type HistoryQuery = Static<typeof HistoryQuerySchema>
