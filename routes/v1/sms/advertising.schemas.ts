import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../../lib/http/response-types.js'

// The number is judged by lib/advertising/opt-out-number.ts: anything but a free 080 number is INVALID_PHONE_NUMBER.
export const PutAdvertisingBodySchema = Type.Object(
  {
    optOutNumber: Nullable(
      Type.String({ description: 'The free number guardians call to refuse advertisements: 080 and 7 or 8 more digits; null removes it' }),
    ),
  },
  { additionalProperties: false, examples: [{ optOutNumber: '080-123-4567' }] },
)
export type PutAdvertisingBody = Static<typeof PutAdvertisingBodySchema>

export const AdvertisingSettingsSchema = Type.Object(
  {
    optOutNumber: Nullable(Type.String({ description: 'Digits, printed at the end of every advertisement' })),
  },
  { $id: 'SmsAdvertisingSettings', examples: [{ optOutNumber: '0801234567' }] },
)
export type AdvertisingSettings = Static<typeof AdvertisingSettingsSchema>
