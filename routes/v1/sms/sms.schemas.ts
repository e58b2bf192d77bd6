import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { PathIdSchema } from '../../../lib/http/id-schema.js'
import {
  ALIMTALK_FALLBACKS,
  SMS_CHANNELS,
  SMS_PURPOSES,
  SMS_STATUSES,
  SmsChannelSchema,
  SmsPurposeSchema,
} from '../../../lib/sms/message-response.js'
import { StringEnum } from '../../../lib/http/response-types.js'
import { IDEMPOTENCY_KEY_PATTERN } from '../../../lib/idempotency/key-format.js'

// Ids are bigint in the database; anything past 2^53 could not be represented exactly, so it is refused as input.
const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const NonBlank = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' })
const Optional = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]))

export const IdParamsSchema = Type.Object({ id: PathIdSchema })
export const ClassParamsSchema = Type.Object({ classId: PathIdSchema })

/**
 * Required, as the idempotency plugin enforces it: its preValidation hook answers IDEMPOTENCY_KEY_MISSING for a
 * missing or malformed key before this schema is ever applied, so the schema only documents the same rule.
 */
export const IdempotencyHeadersSchema = Type.Object({
  'idempotency-key': Type.String({
    pattern: IDEMPOTENCY_KEY_PATTERN,
    description: 'Any 1-255 visible ASCII characters; the same key with the same request answers the first result again',
    examples: ['try-1'],
  }),
})

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

/** An AlimTalk send's values of the template's `#{name}` variables (docs/api.md#sending-alimtalk). */
const KakaoVariablesSchema = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 1000 }), {
  maxProperties: 100,
  examples: [{ time: '16:00' }],
})

/** A recipient of a send: a group member's fields, and for AlimTalk its own variables (they win over `variables`). */
const SendRecipientSchema = Type.Object(
  { ...RecipientSchema.properties, variables: Optional(KakaoVariablesSchema) },
  { additionalProperties: false },
)

// No maxLength on content either: its limit is in provider bytes of the longest rendering (CONTENT_TOO_LONG).
// content is required for SMS and refused for ALIMTALK (lib/kakao/alimtalk-send.ts answers both as VALIDATION_FAILED).
const messageFields = {
  title: NonBlank(200),
  content: Type.Optional(Type.String({ minLength: 1, pattern: '\\S', description: 'Required for SMS; absent for ALIMTALK' })),
  templateId: Optional(Id),
  scheduledAt: Optional(Type.String({ format: 'date-time' })),
  purpose: Type.Optional(SmsPurposeSchema),
  channel: Type.Optional(SmsChannelSchema),
  kakaoTemplateId: Optional(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'ALIMTALK only, required there: an imported Kakao template (APPROVED)' }),
  ),
  variables: Optional(KakaoVariablesSchema),
  fallback: Type.Optional(
    StringEnum(ALIMTALK_FALLBACKS, { description: 'ALIMTALK only: SMS (default) sends the same text as SMS or LMS when AlimTalk fails' }),
  ),
}

// README "Try it": a send to listed recipients, and one to the demo owner's group.
const sendExamples = [
  { title: 'Hello', content: 'Hello {name}', recipients: [{ phone: '010-1234-5678', name: 'Kim' }] },
  { title: 'Holiday', content: 'No class on Monday', recipientGroupId: 1 },
]

// `null` counts as absent for either source, as many JSON serialisers write unset fields that way.
export const SendBodySchema = Type.Object(
  { recipients: Optional(Type.Array(SendRecipientSchema)), recipientGroupId: Optional(Id), ...messageFields },
  { additionalProperties: false, examples: sendExamples },
)
export type SendBody = Static<typeof SendBodySchema>

export const ClassSendBodySchema = Type.Object(messageFields, {
  additionalProperties: false,
  examples: [{ title: 'Notice', content: '{className} starts at 4, {name}', templateId: 1 }],
})
export type ClassSendBody = Static<typeof ClassSendBodySchema>

export const CreateGroupBodySchema = Type.Object(
  { name: NonBlank(100), icon: Optional(Type.String({ maxLength: 50 })), recipients: Recipients },
  {
    additionalProperties: false,
    examples: [{ name: 'Math A guardians', recipients: [{ phone: '010-3000-0001', name: 'Choi Minji', recipientRole: 'GUARDIAN' }] }],
  },
)
export type CreateGroupBody = Static<typeof CreateGroupBodySchema>

/** `field` or `field,asc|desc` over the allowed fields; anything else is VALIDATION_FAILED. */
export const HISTORY_SORT_PATTERN = '^(createdAt|sentAt|status)(,([aA][sS][cC]|[dD][eE][sS][cC]))?$'

export const HistoryQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Union(SMS_STATUSES.map((status) => Type.Literal(status)))),
  recipientType: Type.Optional(Type.String({ minLength: 1, maxLength: 20, examples: ['GUARDIAN'] })),
  purpose: Type.Optional(Type.Union(SMS_PURPOSES.map((purpose) => Type.Literal(purpose)))),
  channel: Type.Optional(Type.Union(SMS_CHANNELS.map((channel) => Type.Literal(channel)))),
  q: Type.Optional(Type.String({ maxLength: 100, description: 'Case-insensitive text in the title or the content' })),
  sort: Type.String({
    pattern: HISTORY_SORT_PATTERN,
    default: 'createdAt,desc',
    description: 'createdAt, sentAt or status, then optionally ,asc or ,desc in any case (ascending without one)',
    examples: ['sentAt,desc'],
  }),
})
export type HistoryQuery = Static<typeof HistoryQuerySchema>
