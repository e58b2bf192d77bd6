/**
 * The one error catalog: every error the service answers has a stable code, an HTTP status and a title here, and
 * a row in docs/api.md#error-codes (test/docs/error-table.test.ts fails when they differ). Handlers throw
 * `new AppError(code, detail)`; plugins/platform/problem.ts renders it.
 */
export const ERROR_CATALOG = {
  VALIDATION_FAILED: [400, 'Request validation failed', 'The request does not match the expected schema.'],
  AUTH_001: [401, 'Invalid credentials', 'The login id, password or tenant is not correct.'],
  AUTH_002: [401, 'Authentication required', 'This endpoint needs an access token.'],
  AUTH_003: [401, 'Invalid access token', 'The access token is malformed, expired or not an access token.'],
  AUTH_004: [401, 'Access token revoked', 'The access token has been revoked.'],
  AUTH_005: [401, 'Refresh token missing', 'The svc_refresh_token cookie is missing.'],
  AUTH_006: [401, 'Invalid refresh token', 'The refresh token is malformed, expired or unknown.'],
  AUTH_007: [401, 'Refresh token revoked', 'The session of this refresh token has ended.'],
  AUTH_008: [403, 'Forbidden', 'Your role is not allowed to use this endpoint.'],
  AUTH_009: [404, 'Tenant not found', 'No tenant has that slug.'],
  AUTH_010: [403, 'Tenant not active', 'The tenant is not active.'],
  AUTH_011: [409, 'Login id taken', 'That login id is already in use.'],
  AUTH_012: [400, 'Password policy violated', 'The password does not meet the password policy.'],
  AUTH_013: [400, 'Current password wrong', 'The current password is not correct.'],
  AUTH_014: [404, 'Session not found', 'No session with that id belongs to you.'],
  AUTH_015: [403, 'User not active', 'The user account is not active.'],
  AUTH_016: [401, 'Refresh token reused', 'A refresh token was used twice; the session has been revoked.'],
  AUTH_017: [
    401,
    'Session replaced by another login',
    'This session was replaced by a later login on another device of the same category.',
  ],
  AUTH_018: [429, 'Too many login attempts', 'Too many failed login attempts; try again later.'],
  AUTH_019: [409, 'Business registration number taken', 'That business registration number is already registered.'],
  OTP_RATE_LIMITED: [429, 'Too many codes', 'Too many one-time codes were asked for; try again later.'],
  OTP_INVALID: [400, 'Code invalid', 'The code is wrong, expired or already used; ask for a new one.'],
  PHONE_REQUIRED: [400, 'Phone required', 'Add a phone number to the profile first.'],
  MFA_REQUIRED: [400, 'Second factor required', 'This account also needs its second factor (secondFactor).'],
  MFA_CODE_INVALID: [401, 'Second factor code invalid', 'The code of the second factor is wrong, expired or already used.'],
  MFA_TOKEN_INVALID: [401, 'Second step expired', 'The sign-in to complete is missing, expired or already completed; sign in again.'],
  MFA_NOT_ENABLED: [409, 'Second factor not enabled', 'This account has no such second factor enabled.'],
  PHONE_NOT_VERIFIED: [409, 'Phone not verified', 'Verify the phone on your profile first.'],
  IDEMPOTENCY_KEY_MISSING: [
    400,
    'Idempotency key missing',
    'The Idempotency-Key header must be 1-255 visible ASCII characters.',
  ],
  IDEMPOTENCY_KEY_REUSED: [422, 'Idempotency key reused', 'This idempotency key was used for a different request.'],
  IDEMPOTENCY_REQUEST_IN_PROGRESS: [
    409,
    'Request in progress',
    'A request with this idempotency key is still being processed.',
  ],
  VERSION_CONFLICT: [409, 'Version conflict', 'The resource was changed by someone else; reload it and retry.'],
  NOT_FOUND: [404, 'Not found', 'No such endpoint.'],
  METHOD_NOT_ALLOWED: [405, 'Method not allowed', 'The endpoint does not accept this method.'],
  PAYLOAD_TOO_LARGE: [413, 'Payload too large', 'The request body is too large.'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'Unsupported media type', 'Send the body as application/json.'],
  // Answered by lib/http/server-options.ts from Node's HTTP parser, before any route or hook (no request id).
  REQUEST_HEADER_FIELDS_TOO_LARGE: [431, 'Request header fields too large', 'The request headers are too large.'],
  REQUEST_TIMEOUT: [408, 'Request timeout', 'The request was not received in time.'],
  // Answered by plugins/platform/node-refusals.ts for an Expect header Node cannot meet (anything but 100-continue).
  EXPECTATION_FAILED: [417, 'Expectation failed', 'The Expect header asks for something this service does not do.'],
  RATE_LIMITED: [429, 'Too many requests', 'Too many requests; try again later.'],
  SENDER_SETTING_NOT_APPROVED: [
    409,
    'Sender number not approved',
    'The tenant has no approved sender number for the live SMS provider.',
  ],
  SENDER_SETTING_NOT_FOUND: [404, 'Sender setting not found', 'The tenant has no sender setting.'],
  SENDER_NUMBER_CHANGED: [
    409,
    'Sender number changed',
    'The tenant changed its sender number after it was reviewed; review the current number.',
  ],
  SENDER_NUMBER_IN_USE: [409, 'Sender number in use', 'That sender number is APPROVED for another tenant.'],
  INVALID_PHONE_NUMBER: [400, 'Invalid phone number', 'A phone number is not valid.'],
  RECIPIENTS_REQUIRED: [400, 'Recipients required', 'The send has no recipients.'],
  RECIPIENTS_CONFLICT: [400, 'Recipients conflict', 'Give either recipients or recipientGroupId, not both.'],
  TOO_MANY_RECIPIENTS: [400, 'Too many recipients', 'One send may have at most 10,000 recipients.'],
  CONTENT_TOO_LONG: [400, 'Content too long', 'The content is longer than 2,000 bytes.'],
  SCHEDULED_AT_NOT_IN_FUTURE: [400, 'scheduledAt not in the future', 'scheduledAt must be in the future.'],
  SCHEDULED_AT_TOO_FAR: [400, 'scheduledAt too far ahead', 'scheduledAt is further ahead than a send may be scheduled.'],
  TOO_MANY_FOR_ONE_PHONE: [400, 'Too many recipients on one phone', 'Too many recipients of one send share a phone number.'],
  RECIPIENT_GROUP_NOT_FOUND: [404, 'Recipient group not found', 'No such recipient group of yours.'],
  CLASS_NOT_FOUND: [404, 'Class not found', 'No such class.'],
  CLASS_HAS_NO_STUDENTS: [400, 'Class has no students', 'The class has no enrolled student with a guardian phone.'],
  OPT_OUT_NUMBER_REQUIRED: [
    409,
    'Opt-out number required',
    'An advertisement must carry a free opt-out number; the OWNER sets it in the advertising settings first.',
  ],
  ADVERTISEMENT_QUIET_HOURS: [400, 'Advertisement in quiet hours', 'Advertisements are not sent from 21:00 to 08:00.'],
  RECIPIENTS_OPTED_OUT: [400, 'Every recipient opted out', 'Every recipient of the advertisement is on the opt-out list.'],
  OPT_OUT_NOT_FOUND: [404, 'Opt-out not found', 'That number is not on the opt-out list.'],
  OPT_OUT_LISTED: [
    409,
    'Number on the opt-out list',
    'The number refused advertisements; the refusal is removed from the opt-out list deliberately before a consent is recorded.',
  ],
  AD_CONSENT_NOT_FOUND: [404, 'Consent not found', 'That number has no recorded consent to advertising.'],
  RECIPIENTS_WITHOUT_CONSENT: [
    400,
    'No recipient consented',
    'No recipient of the advertisement has a live consent to advertising (or every one without it is on the opt-out list).',
  ],
  SMS_NOT_FOUND: [404, 'SMS not found', 'No such message.'],
  WEBHOOK_URL_INVALID: [
    400,
    'Webhook URL invalid',
    'The webhook URL must be https:// and must not resolve to a loopback, private, link-local or unique-local address.',
  ],
  WEBHOOK_ENDPOINT_NOT_FOUND: [404, 'Webhook endpoint not found', 'The academy has no webhook endpoint.'],
  SMS_NOT_CANCELLABLE: [
    409,
    'SMS not cancellable',
    'Only a pending message that is scheduled in the future, or held back and never handed to the provider, can be cancelled.',
  ],
  SMS_QUOTA_EXCEEDED: [
    429,
    'SMS quota exceeded',
    "The tenant's daily SMS recipient quota is used up; try again after 00:00 UTC.",
  ],
  TEMPLATE_NOT_FOUND: [404, 'Template not found', 'No such template.'],
  KAKAO_CHANNEL_NOT_FOUND: [404, 'Kakao channel not found', 'The academy has linked no Kakao channel.'],
  KAKAO_CHANNEL_UNKNOWN: [409, 'Kakao channel unknown', 'The provider has no Kakao channel with that pfId.'],
  KAKAO_TEMPLATE_NOT_FOUND: [404, 'Kakao template not found', 'No such Kakao template.'],
  KAKAO_TEMPLATE_UNKNOWN: [409, 'Kakao template unknown', "The provider has no such template of the academy's Kakao channel."],
  KAKAO_TEMPLATE_NOT_APPROVED: [409, 'Kakao template not approved', 'Only a template the provider APPROVED can be sent; refresh it once it is.'],
  KAKAO_VARIABLES_MISSING: [400, 'Kakao template variables missing', 'A variable of the Kakao template has no value for some recipient.'],
  ALIMTALK_NOT_FOR_ADVERTISING: [400, 'AlimTalk not for advertising', 'AlimTalk carries informational notices only; send advertisements as SMS.'],
  PASSKEYS_DISABLED: [404, 'Passkeys disabled', 'This service has no passkeys configured.'],
  PASSKEY_INVALID: [400, 'Passkey invalid', 'The passkey response did not verify (challenge, origin, RP ID or user verification); start again.'],
  PASSKEY_LIMIT: [409, 'Too many passkeys', 'An account has at most 10 passkeys; remove one first.'],
  PASSKEY_NOT_FOUND: [404, 'Passkey not found', 'No passkey with that id is yours.'],
  API_KEY_LIMIT: [409, 'API key limit reached', 'A tenant may have at most 20 live API keys; revoke one first.'],
  API_KEY_NOT_FOUND: [404, 'API key not found', 'No live API key has that id.'],
  API_KEY_SCOPE: [403, 'Not allowed for API keys', "This route is outside the API key's scopes, or no API key may call it."],
  APPROVAL_STATUS_INVALID: [400, 'Approval status invalid', 'registrationStatus must be APPROVED or REJECTED.'],
  REJECTION_REASON_REQUIRED: [400, 'Rejection reason required', 'REJECTED needs a non-blank rejectionReason.'],
  TENANT_NOT_FOUND: [404, 'Tenant not found', 'No tenant has that slug.'],
  TENANT_MISMATCH: [403, 'Tenant mismatch', 'X-Tenant-Slug differs from the tenant in the path.'],
  INTERNAL_SIGNATURE_INVALID: [401, 'Invalid signature', 'The request signature is missing, stale or wrong.'],
  WEBHOOK_SECRET_INVALID: [401, 'Invalid webhook secret', 'X-Provider-Secret is missing or wrong.'],
  CSRF_ORIGIN_REJECTED: [
    403,
    'Cross-origin request refused',
    'A change authenticated by cookie must come from the service itself or an origin listed in SVC_CORS_ORIGINS.',
  ],
  SERVICE_UNAVAILABLE: [503, 'Service unavailable', 'The service is not ready; try again shortly.'],
  INTERNAL_ERROR: [500, 'Internal error', 'An unexpected error occurred.'],
} as const satisfies Record<string, readonly [number, string, string]>

export type ErrorCode = keyof typeof ERROR_CATALOG

/**
 * The codes some routes answer with another status than the catalog's, and which: a send without a linked Kakao
 * channel is a conflict with the academy's state (409), where reading the channel finds nothing (404). A throw
 * picks one with `extra.status`, and the route lists it in `schema.problemStatuses`.
 */
export const OTHER_STATUSES = { KAKAO_CHANNEL_NOT_FOUND: [409] } as const satisfies { [C in ErrorCode]?: readonly number[] }

/** The statuses `code` may be answered with besides its catalog one (never, for most codes). */
export type OtherStatus<C extends ErrorCode> = C extends keyof typeof OTHER_STATUSES ? (typeof OTHER_STATUSES)[C][number] : never

export interface FieldError {
  field: string
  message: string
}

export class AppError<C extends ErrorCode = ErrorCode> extends Error {
  readonly status: number
  readonly title: string
  readonly detail: string

  constructor(
    readonly code: C,
    detail?: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; status?: OtherStatus<C> } = {},
  ) {
    const [status, title, defaultDetail] = ERROR_CATALOG[code]
    super(detail ?? defaultDetail)
    this.name = 'AppError'
    this.status = extra.status ?? status
    this.title = title
    this.detail = detail ?? defaultDetail
  }
}

export function problemType(code: ErrorCode): string {
  return `urn:svc:error:${code.toLowerCase().replaceAll('_', '-')}`
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError
}
