import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from '../../../lib/http/response-types.js'

// The number is judged by lib/sms/phone.ts, written any way people write it: every bad one is INVALID_PHONE_NUMBER.
export const OptOutBodySchema = Type.Object(
  { phone: Type.String({ description: 'The number that refused advertisements, in any usual Korean form' }) },
  { additionalProperties: false, examples: [{ phone: '010-1234-5678' }] },
)
export type OptOutBody = Static<typeof OptOutBodySchema>

export const OptOutParamsSchema = Type.Object({
  phone: Type.String({ maxLength: 32, description: 'The number, digits (other usual forms are normalised too)' }),
})

export const OptOutQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
})

const example = { phone: '010-****-5678', createdAt: '2026-11-28T09:00:00.000Z', source: 'STAFF' }

export const OptOutSchema = Type.Object(
  {
    phone: Type.String({ description: 'Masked: first 3 digits, ****, last 4' }),
    createdAt: Type.String({ format: 'date-time' }),
    source: StringEnum(['STAFF', 'PROVIDER_080'], {
      description: "STAFF: listed through this API; PROVIDER_080: refused by calling the academy's 080 number, read from the provider",
    }),
  },
  { $id: 'SmsOptOut', examples: [example] },
)
export type OptOut = Static<typeof OptOutSchema>

export const OptOutPageSchema = Type.Object(
  {
    items: Type.Array(OptOutSchema),
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer(),
    totalPages: Type.Integer(),
    hasNext: Type.Boolean(),
  },
  { $id: 'SmsOptOutPage' },
)
