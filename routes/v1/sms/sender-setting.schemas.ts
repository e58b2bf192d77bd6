import { Type, type Static } from '@sinclair/typebox'

// The number is judged by lib/sms/phone.ts, its length included: every bad number is INVALID_PHONE_NUMBER.
export const PutSenderSettingBodySchema = Type.Object(
  { senderNumber: Type.String() },
  { additionalProperties: false, examples: [{ senderNumber: '02-1234-5678' }] },
)
export type PutSenderSettingBody = Static<typeof PutSenderSettingBodySchema>
