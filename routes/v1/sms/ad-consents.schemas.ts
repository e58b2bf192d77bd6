import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../../../lib/http/response-types.js'

// The number is judged by lib/sms/phone.ts, written any way people write it: every bad one is INVALID_PHONE_NUMBER.
export const AdConsentBodySchema = Type.Object(
  {
    phone: Type.String({ description: 'The number that agreed to receive advertisements, in any usual Korean form' }),
    source: StringEnum(['WRITTEN', 'ORAL', 'ONLINE'], { description: 'How the agreement was given' }),
    evidence: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'What was agreed and where the proof is filed (a form number, a recording, a web form entry)',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ phone: '010-1234-5678', source: 'WRITTEN', evidence: '수강 신청서 2026-031, 광고 수신 동의란 서명' }],
  },
)
export type AdConsentBody = Static<typeof AdConsentBodySchema>

export const AdConsentParamsSchema = Type.Object({
  phone: Type.String({ maxLength: 32, description: 'The number, digits (other usual forms are normalised too)' }),
})

export const AdConsentQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  phone: Type.Optional(Type.String({ maxLength: 32, description: "Only this number's consent" })),
})

const example = {
  phone: '010-****-5678',
  source: 'WRITTEN',
  evidence: '수강 신청서 2026-031, 광고 수신 동의란 서명',
  consentedAt: '2026-11-29T09:00:00.000Z',
  confirmedAt: '2026-11-29T09:00:00.000Z',
  createdBy: 7,
}

export const AdConsentSchema = Type.Object(
  {
    phone: Type.String({ description: 'Masked: first 3 digits, ****, last 4' }),
    source: StringEnum(['WRITTEN', 'ORAL', 'ONLINE']),
    evidence: Type.String(),
    consentedAt: Type.String({ format: 'date-time', description: 'When the number first consented' }),
    confirmedAt: Type.String({
      format: 'date-time',
      description: 'When the consent was last confirmed (recorded again, or its two-year notice handed to the provider); it lapses SVC_AD_CONSENT_DAYS after this',
    }),
    createdBy: Nullable(Type.Integer({ description: 'The staff member who first recorded it' })),
  },
  { $id: 'SmsAdConsent', examples: [example] },
)
export type AdConsent = Static<typeof AdConsentSchema>

export const AdConsentPageSchema = Type.Object(
  {
    items: Type.Array(AdConsentSchema),
    page: Type.Integer(),
    perPage: Type.Integer(),
    total: Type.Integer(),
    totalPages: Type.Integer(),
    hasNext: Type.Boolean(),
  },
  { $id: 'SmsAdConsentPage' },
)
