import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../../lib/http/response-types.js'

// The number is judged by lib/advertising/opt-out-number.ts: anything but a free 080 number is INVALID_PHONE_NUMBER.
export const PutAdvertisingBodySchema = Type.Object(
  {
    optOutNumber: Nullable(
      Type.String({ description: 'The free number guardians call to refuse advertisements: 080 and 7 or 8 more digits; null removes it' }),
    ),
    consentRequired: Type.Optional(
      Type.Boolean({ description: 'Whether an advertisement reaches only numbers with a live consent; absent: unchanged' }),
    ),
  },
  { additionalProperties: false, examples: [{ optOutNumber: '080-123-4567' }, { optOutNumber: '080-123-4567', consentRequired: true }] },
)
export type PutAdvertisingBody = Static<typeof PutAdvertisingBodySchema>

export const AdvertisingSettingsSchema = Type.Object(
  {
    optOutNumber: Nullable(Type.String({ description: 'Digits, printed at the end of every advertisement' })),
    consentRequired: Type.Boolean({
      description: 'An advertisement reaches only numbers with a live consent (default true); others are NO_CONSENT',
    }),
  },
  { $id: 'SmsAdvertisingSettings', examples: [{ optOutNumber: '0801234567', consentRequired: true }] },
)
export type AdvertisingSettings = Static<typeof AdvertisingSettingsSchema>
