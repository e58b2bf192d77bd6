/** A usage report's figures with nothing counted (GET /v1/sms/usage): the start of every expected total. */
export const NO_USAGE = {
  messages: 0,
  recipients: 0,
  sms: 0,
  lms: 0,
  segments: 0,
  estimatedCost: 0,
  delivered: 0,
  failed: 0,
  optedOut: 0,
  verificationCodes: 0,
  alimtalk: 0,
  fallbacks: 0,
  noConsent: 0,
  consentNotices: 0,
}
