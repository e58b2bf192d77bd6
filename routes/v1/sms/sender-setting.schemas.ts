import { Type, type Static } from '@sinclair/typebox'

// The number itself is judged by lib/sms/phone.ts (INVALID_PHONE_NUMBER); the schema only bounds the input.
export const PutSenderSettingBodySchema = Type.Object(
  { senderNumber: Type.String({ maxLength: 32 }) },
  { additionalProperties: false },
)
export type PutSenderSettingBody = Static<typeof PutSenderSettingBodySchema>
