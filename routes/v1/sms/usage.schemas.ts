import { Type } from '@sinclair/typebox'

// format 'date' (ajv-formats) refuses what is no calendar date (2026-02-30); the pattern keeps years PostgreSQL and
// JavaScript read alike (no year 0, no fewer or more than four digits).
const LocalDate = (description: string) =>
  Type.String({ format: 'date', pattern: '^[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}$', description, examples: ['2026-11-01'] })

export const UsageQuerySchema = Type.Object({
  from: LocalDate('First local day of SVC_TIME_ZONE, included'),
  to: LocalDate('Last local day, included; at most 366 days from `from`, both included'),
})

const Count = (description: string) => Type.Integer({ minimum: 0, description })

const figures = {
  messages: Count('Messages accepted (verification codes included)'),
  recipients: Count('Their recipients'),
  sms: Count('Messages sent as SMS'),
  lms: Count('Messages sent as LMS'),
  segments: Count('Billable provider messages (estimatedSegments)'),
  estimatedCost: Count('Sum of the messages\' totalPrice, KRW (an estimate: the provider bills)'),
  delivered: Count('Recipients the provider reported delivered'),
  failed: Count('Recipients that failed'),
  optedOut: Count('Recipients left out as opted out (advertisements)'),
  verificationCodes: Count('The part of messages that are one-time-code SMS'),
  alimtalk: Count('Recipients delivered over KakaoTalk (AlimTalk)'),
  fallbacks: Count('Recipients of AlimTalk messages delivered by SMS or LMS after AlimTalk failed'),
  noConsent: Count('Recipients of advertisements left out for want of a live consent'),
  consentNotices: Count('The part of messages that are the two-year notices of a consent to advertising'),
}

const UsageFiguresSchema = Type.Object(figures)

export const UsageReportSchema = Type.Object(
  {
    timeZone: Type.String({ description: 'SVC_TIME_ZONE, the zone whose local days these are', examples: ['Asia/Seoul'] }),
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    totals: UsageFiguresSchema,
    days: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), ...figures }), {
      description: 'Days with at least one counted message, ascending',
    }),
  },
  { $id: 'SmsUsageReport' },
)
