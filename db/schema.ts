/**
 * Written by hand, and held against the database: test/db/schema-matches-database.test.ts migrates a database of
 * its own and fails, listing every difference, on a table, column, type, nullability or default that differs from
 * what is declared here. Run it after changing a migration or this file:
 * `npx vitest run --project fast test/db/schema-matches-database.test.ts`.
 */
import type { ColumnType, Generated } from 'kysely'
import type { AuditEventType, AuditTargetType } from '../lib/audit/event-types.js'

/** Timestamps are written as Date or string and always read back as Date. */
type Timestamp = ColumnType<Date, Date | string, Date | string>
/** A timestamp column with a default (`now()`): an insert may leave it out. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>

export type TenantStatus = 'ACTIVE' | 'SUSPENDED' | 'CLOSED'
export type Role = 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT'
export type UserStatus = 'ACTIVE' | 'SUSPENDED' | 'DELETED'

// tenants: no RLS. It is read before any tenant context exists (login, registration, internal calls).
export interface TenantsTable {
  id: Generated<number>
  slug: string
  customId: string
  customDomain: string | null
  name: string
  businessRegistrationNumber: string | null
  status: ColumnType<TenantStatus, TenantStatus | undefined, TenantStatus>
  onboardingCompletedAt: NullableTimestamp
  /** The tenant's own daily recipient quota (npm run tenant:quota); null: SVC_SMS_TENANT_DAILY_RECIPIENTS; 0: none. */
  dailyRecipientQuota: ColumnType<number | null, number | null | undefined, number | null>
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

// owner_directory: no RLS. Maps an OWNER's login id to the tenant for root-entry login.
export interface OwnerDirectoryTable {
  userLoginId: string
  tenantId: number
  userId: number
  /** NFKC case-folded login id, unique among owners (db/login-key.ts). */
  loginKey: Generated<string>
  /** A look-alike that predates the unique key (migration 2026-11-23T03-20-00); left out of the unique index. */
  legacyLoginKeyDuplicate: Generated<boolean>
  createdAt: Generated<Date>
}

export interface UsersTable {
  id: Generated<number>
  tenantId: number
  userLoginId: string
  passwordHash: string
  name: string
  phone: string | null
  /** When the user proved the current phone (lib/account-security/codes); a trigger clears it whenever the phone changes. */
  phoneVerifiedAt: NullableTimestamp
  /** When a verified phone was last replaced (the same trigger); recovery and SMS codes wait after it (lib/account-security/phone/phone-change.ts). */
  verifiedPhoneReplacedAt: NullableTimestamp
  role: Role
  status: ColumnType<UserStatus, UserStatus | undefined, UserStatus>
  avatarSeed: string
  /** NFKC case-folded login id, unique per tenant (db/login-key.ts). */
  loginKey: Generated<string>
  /** A look-alike that predates the unique key (migration 2026-11-23T03-20-00); left out of the unique index. */
  legacyLoginKeyDuplicate: Generated<boolean>
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

export type DeviceCategory = 'WEB' | 'MOBILE' | 'TABLET' | 'DESKTOP'

export interface SessionsTable {
  tenantId: number
  sid: string
  userId: number
  deviceCategory: DeviceCategory
  userAgent: string | null
  ipAddress: string | null
  accessJti: string
  accessExpiresAt: Timestamp
  refreshJti: string
  refreshExpiresAt: Timestamp
  createdAt: Generated<Date>
  lastRefreshedAt: NullableTimestamp
  /** The refresh JTI the last rotation replaced (reuse grace); null before the first rotation. */
  previousRefreshJti: string | null
}

export type RevocationReason =
  | 'SESSION_REPLACED_BY_LOGIN'
  | 'LOGOUT'
  | 'LOGOUT_ALL'
  | 'REVOKED_BY_USER'
  | 'PASSWORD_CHANGED'
  | 'PASSWORD_RESET'
  | 'LOGIN_ID_CHANGED'
  | 'USER_DELETED'
  | 'REFRESH_TOKEN_REUSED'

export interface SessionRevocationsTable {
  tenantId: number
  sid: string
  reason: RevocationReason
  expiresAt: Timestamp
  createdAt: Generated<Date>
}

// No tenant_id and no RLS: random token ids only (see the auth-sessions migration).
export interface RevokedAccessTokensTable {
  jti: string
  expiresAt: Timestamp
}

/** Signatures of accepted internal calls, kept until their timestamp leaves the window (no tenant data, no RLS). */
export interface UsedInternalSignaturesTable {
  signature: string
  expiresAt: Timestamp
}

/** Failed logins of ids that name no user, per (customId or `root`, login id as presented); no tenant, no RLS. */
export interface LoginFailuresTable {
  scope: string
  loginId: string
  failures: Generated<number>
  lockedUntil: NullableTimestamp
  updatedAt: DefaultedTimestamp
}

/** Failed logins of one known user, whatever the entry (RLS: a tenant table). */
export interface UserLoginFailuresTable {
  tenantId: number
  userId: number
  failures: Generated<number>
  lockedUntil: NullableTimestamp
  updatedAt: DefaultedTimestamp
}

export interface RateLimitWindowsTable {
  key: string
  windowStart: Timestamp
  hits: number
}

export type RegistrationStatus = 'PENDING' | 'APPROVED' | 'REJECTED'

export interface SmsSenderSettingsTable {
  tenantId: number
  id: Generated<number>
  provider: string
  senderNumber: string | null
  registrationStatus: RegistrationStatus
  rejectionReason: string | null
  approvedAt: NullableTimestamp
  rejectedAt: NullableTimestamp
  version: Generated<number>
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

export type TemplateCategory = 'GENERAL' | 'ATTENDANCE' | 'PAYMENT' | 'EXAM' | 'CUSTOM'

export interface SmsTemplatesTable {
  tenantId: number
  id: Generated<number>
  name: string
  content: string
  category: TemplateCategory
  createdBy: number
  version: Generated<number>
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

export interface RecipientGroupsTable {
  tenantId: number
  id: Generated<number>
  ownerStaffId: number
  name: string
  icon: string | null
  recipientCount: number
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

/**
 * A recipient as stored, the columns group members and message recipients share: phone in national digits, absent
 * fields as null. lib/sms builds these and the repositories write and read them.
 */
export interface StoredRecipient {
  phone: string
  name: string | null
  studentId: number | null
  className: string | null
  recipientRole: string | null
}

export interface RecipientGroupMembersTable extends StoredRecipient {
  tenantId: number
  groupId: number
  memberIndex: number
}

export type SmsStatus = 'PENDING' | 'DISPATCHED' | 'SENT' | 'FAILED' | 'PARTIAL' | 'CANCELLED'
export type SmsChannel = 'SMS' | 'ALIMTALK'
export type AlimtalkFallback = 'SMS' | 'NONE'
export type DeliveredVia = 'ALIMTALK' | 'SMS' | 'LMS'
export type DeliveryStatus = 'PENDING' | 'DISPATCHED' | 'DELIVERED' | 'FAILED' | 'CANCELLED' | 'OPTED_OUT' | 'NO_CONSENT'

/** An advertisement is framed, kept out of the quiet hours and off the opt-out list (lib/advertising/advertising.ts). */
export type SmsPurpose = 'INFORMATIONAL' | 'ADVERTISEMENT'
/** STAFF: a staff member's send, in the history. Any other kind is the service's own message (lib/dispatch/system-messages.ts). */
export type SmsKind = 'STAFF' | 'VERIFICATION_CODE' | 'ACCOUNT_NOTICE' | 'CONSENT_NOTICE'

export interface SmsMessagesTable {
  tenantId: number
  id: Generated<number>
  kind: ColumnType<SmsKind, SmsKind | undefined, SmsKind>
  /** The staff member who sent it; null exactly for system messages (a CHECK ties it to kind). */
  senderId: number | null
  senderNumber: string | null
  recipientType: string
  recipientCount: number
  title: string
  recipientGroupId: number | null
  content: string
  templateId: number | null
  scheduledAt: NullableTimestamp
  cancelledAt: NullableTimestamp
  sentAt: NullableTimestamp
  messageType: 'SMS' | 'LMS'
  estimatedSegments: number
  unitPrice: number
  totalPrice: number
  status: ColumnType<SmsStatus, SmsStatus | undefined, SmsStatus>
  successCount: Generated<number>
  failCount: Generated<number>
  provider: string
  providerGroupId: string | null
  providerStatus: string | null
  dispatchAttempts: Generated<number>
  lastProviderError: string | null
  nextAttemptAt: DefaultedTimestamp
  claimToken: string | null
  claimedUntil: NullableTimestamp
  /** When the current claim handed the message to the provider; null until then. */
  handedOverAt: NullableTimestamp
  /**
   * The provider group of the attempt whose outcome is not recorded yet: set before any message is added to it,
   * cleared with the outcome. Found set by the next holder, it is read back before anything is sent again.
   */
  openGroupId: string | null
  /** After this moment the message is no longer handed to the provider; it ends FAILED instead. */
  discardAfter: NullableTimestamp
  dispatchedAt: NullableTimestamp
  confirmedAt: NullableTimestamp
  version: Generated<number>
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
  purpose: ColumnType<SmsPurpose, SmsPurpose | undefined, SmsPurpose>
  /** An advertisement's frame, fixed at acceptance: the name after `(광고)` and the opt-out number. */
  adSenderName: string | null
  adOptOutNumber: string | null
  /** Recipients on the opt-out list: in recipientCount, never in estimatedSegments or totalPrice. */
  optedOutCount: Generated<number>
  /** Recipients without a live consent (NO_CONSENT): in recipientCount, never in estimatedSegments or totalPrice. */
  noConsentCount: Generated<number>
  channel: ColumnType<SmsChannel, SmsChannel | undefined, SmsChannel>
  /** ALIMTALK only (null for SMS): what the provider does when AlimTalk fails. */
  fallback: AlimtalkFallback | null
  /** The tenant's imported template (kakao_templates.id); no foreign key, so deleting the template keeps history. */
  kakaoTemplateId: number | null
  /** Frozen at acceptance: the channel and provider template the hand-over sends. */
  kakaoPfId: string | null
  kakaoProviderTemplateId: string | null
  /** The request-wide `variables` of an AlimTalk send; written as JSON text. */
  kakaoVariables: ColumnType<Record<string, string> | null, string | null | undefined, string | null>
  /** Of successCount: recipients Kakao delivered, and those the SMS or LMS fallback delivered (re-priced). */
  alimtalkCount: Generated<number>
  fallbackCount: Generated<number>
}

export interface SmsRecipientsTable extends StoredRecipient {
  tenantId: number
  smsId: number
  recipientIndex: number
  deliveryStatus: ColumnType<DeliveryStatus, DeliveryStatus | undefined, DeliveryStatus>
  providerMessageId: string | null
  /** The provider group of the call that sent this recipient (a retry sends the rest in a new group). */
  providerGroupId: string | null
  providerStatusCode: string | null
  providerStatusMessage: string | null
  reportedAt: NullableTimestamp
  updatedAt: DefaultedTimestamp
  /** An AlimTalk recipient's own values, name and className defaults applied; written as JSON text. */
  variables: ColumnType<Record<string, string> | null, string | null | undefined, string | null>
  /** How the provider reported it delivered: ALIMTALK, or SMS/LMS by the fallback; null until known. */
  deliveredVia: DeliveredVia | null
}

/** Recipients accepted per tenant and local day of SVC_TIME_ZONE (docs/api.md#daily-quota); cancelling gives them back. */
export interface SmsDailyUsageTable {
  tenantId: number
  day: ColumnType<Date, string, string>
  recipients: number
  updatedAt: Generated<Date>
}

/** The usage report's figures, as sms_usage, sms_usage_days and sms_usage_changes carry them (db/repos/audit/sms-usage.ts). */
export interface SmsUsageFigures {
  messages: Generated<number>
  recipients: Generated<number>
  sms: Generated<number>
  lms: Generated<number>
  segments: Generated<number>
  estimatedCost: Generated<number>
  delivered: Generated<number>
  failed: Generated<number>
  optedOut: Generated<number>
  verificationCodes: Generated<number>
  alimtalk: Generated<number>
  fallbacks: Generated<number>
  noConsent: Generated<number>
  consentNotices: Generated<number>
}

/** Usage totals per tenant and 15-minute UTC bucket of acceptance, written only by the minute roll-up (RLS). */
export interface SmsUsageTable extends SmsUsageFigures {
  tenantId: number
  bucket: Timestamp
}

/** The same totals per tenant and local day of the zone sms_usage_zones names, written only by the roll-up (RLS). */
export interface SmsUsageDaysTable extends SmsUsageFigures {
  tenantId: number
  timeZone: string
  day: ColumnType<Date, string, string>
}

/** The zone whose local days sms_usage_days holds (at most one row): no tenant, no RLS; written only by the roll-up. */
export interface SmsUsageZonesTable {
  timeZone: string
  readyAt: Generated<Date>
}

/** Usage deltas journaled by triggers on sms_messages, until the minute roll-up moves them into sms_usage (RLS). */
export interface SmsUsageChangesTable extends SmsUsageFigures {
  id: Generated<number>
  tenantId: number
  bucket: Timestamp
}

export interface ClassesTable {
  id: Generated<number>
  tenantId: number
  name: string
  createdAt: Generated<Date>
}

export interface ClassEnrollmentsTable {
  id: Generated<number>
  tenantId: number
  classId: number
  studentId: number
  guardianPhone: string | null
  status: ColumnType<string, string | undefined, string>
  createdAt: Generated<Date>
}

export interface IdempotencyKeysTable {
  tenantId: number
  userId: number
  route: string
  key: string
  fingerprint: string
  state: 'IN_PROGRESS' | 'COMPLETED'
  resourceId: number | null
  statusCode: number | null
  createdAt: Generated<Date>
  expiresAt: Timestamp
}

/** Kept by triggers on sms_messages; read for unfiltered history totals. */
export interface SmsMessageCountsTable {
  tenantId: number
  senderId: number
  messages: number
}

/**
 * The ranges of message ids the SMS tables are partitioned by, one a month, and when each was opened (ids started
 * coming from it); the owner's partition upkeep only (db/repos/sms/sms-retention.ts), not readable by the runtime role.
 */
export interface SmsIdRangesTable {
  firstId: number
  suffix: string
  openedAt: Date | null
}

/**
 * The retention the purges apply, one row: written by the owner with every migration run (db/migrate.ts), read by
 * the SECURITY DEFINER purge functions. No tenant_id, no RLS; SELECT only for the runtime role.
 */
export interface RetentionSettingsTable {
  id: Generated<boolean>
  auditDays: number
  smsDays: number
  updatedAt: DefaultedTimestamp
}

/** The academy's audit log (lib/audit): insert and select only for the runtime role. */
export interface AuditEventsTable {
  tenantId: number
  id: Generated<number>
  type: AuditEventType
  occurredAt: DefaultedTimestamp
  actorId: number | null
  targetType: AuditTargetType | null
  targetId: string | null
  ipAddress: string | null
  requestId: string | null
  details: ColumnType<Record<string, unknown>, string | undefined, never>
}

export type OneTimeCodePurpose = 'PHONE_VERIFICATION' | 'PASSWORD_RESET' | 'MFA_SMS'

/** One live code per user and purpose, its keyed hash only (lib/account-security/codes; RLS). */
export interface OneTimeCodesTable {
  tenantId: number
  userId: number
  purpose: OneTimeCodePurpose
  codeHash: string
  /** The number the code was sent to, national digits: the code dies when the user's phone is no longer this one. */
  phone: string
  /** Wrong tries so far; the code dies at SVC_OTP_MAX_ATTEMPTS. */
  attempts: Generated<number>
  expiresAt: Timestamp
  /** No new code for this user and purpose before this moment (SVC_OTP_RESEND_SECONDS). */
  resendAfter: Timestamp
  createdAt: Generated<Date>
}

/** Codes sent per user and local day of SVC_TIME_ZONE, for the daily cap (RLS). */
export interface OneTimeCodeDaysTable {
  tenantId: number
  userId: number
  day: ColumnType<Date, string, string>
  codes: number
}

/**
 * Codes sent per phone number and local day across every tenant (the brake on SMS pumping): no tenant, no RLS.
 * `phoneKey` is an HMAC of the number under the first data key (lib/account-security/codes/codes.ts), so the table names no number.
 */
export interface OneTimeCodePhoneDaysTable {
  phoneKey: string
  day: ColumnType<Date, string, string>
  codes: number
}

/**
 * Codes that verify a number, per tenant and local day of SVC_TIME_ZONE (RLS): `counter` is 'tenant' for the tenant's
 * total, else the number's keyed hash (lib/account-security/codes/codes.ts), so the table names no number.
 */
export interface PhoneVerificationDaysTable {
  tenantId: number
  counter: string
  day: ColumnType<Date, string, string>
  codes: number
}

/**
 * A user's second factors (lib/account-security/second-factor; RLS). The TOTP secrets are sealed (lib/account-security/second-factor/sealed-secret.ts), never in clear.
 * `totpSecret` counts from `totpEnabledAt`; `totpPendingSecret` waits for its first code.
 */
export interface UserSecondFactorsTable {
  tenantId: number
  userId: number
  totpSecret: string | null
  totpEnabledAt: NullableTimestamp
  /** The last TOTP time step accepted: each step signs in once. */
  totpLastStep: number | null
  totpPendingSecret: string | null
  /** Wrong codes against the pending secret; it is discarded at SVC_OTP_MAX_ATTEMPTS. */
  totpPendingAttempts: Generated<number>
  smsEnabledAt: NullableTimestamp
  /**
   * The key the user's recovery codes are hashed with, sealed (lib/account-security/second-factor/recovery-key.ts); null for a set hashed under
   * the legacy key of the data keys, as before key ids.
   */
  recoveryKeySealed: string | null
  updatedAt: DefaultedTimestamp
}

/** A user's live recovery codes, a keyed hash each (lib/account-security/second-factor/recovery-codes.ts; RLS). */
export interface UserRecoveryCodesTable {
  tenantId: number
  userId: number
  codeHash: string
  createdAt: Generated<Date>
}

/** Login attempts whose password was right and whose second step is to come; the token's SHA-256 only (RLS). */
export interface MfaChallengesTable {
  tenantId: number
  tokenHash: string
  userId: number
  expiresAt: Timestamp
  createdAt: Generated<Date>
}

/** The tenant's opt-out list: numbers (stored digits) no advertisement may reach (RLS). */
/** STAFF: listed through the API; PROVIDER_080: read from the provider's 080 refusal list (lib/advertising/opt-out-sync.ts). */
export type OptOutSource = 'STAFF' | 'PROVIDER_080'

export interface SmsOptOutsTable {
  tenantId: number
  phone: string
  /** The staff member who listed it; null for a refusal read from the provider. */
  createdBy: number | null
  createdAt: Generated<Date>
  source: ColumnType<OptOutSource, OptOutSource | undefined, OptOutSource>
}

export type AdConsentSource = 'WRITTEN' | 'ORAL' | 'ONLINE'

/** A number that agreed to receive the tenant's advertisements (lib/advertising/consents.ts; RLS). */
export interface SmsAdConsentsTable {
  tenantId: number
  phone: string
  source: AdConsentSource
  evidence: string
  consentedAt: Timestamp
  /** Live until SVC_AD_CONSENT_DAYS after this; renewed when the two-year notice is handed over. */
  confirmedAt: Timestamp
  createdBy: number | null
  updatedAt: DefaultedTimestamp
  /** The queued two-year notice (a CONSENT_NOTICE system message) while its hand-over is awaited. */
  noticeSmsId: number | null
  /** The confirmedAt the latest notice was queued for: no second notice for the same period. */
  noticeFor: NullableTimestamp
}

/** Per tenant, where the reading of the provider's 080 refusal list stands, and who reads it (RLS). */
export interface SmsOptOutSyncsTable {
  tenantId: number
  /** The sender number the list is read for; another number starts the reading over. */
  senderNumber: string
  /** dateCreated[gte] of the walk in progress (null: the whole list). */
  walkFrom: NullableTimestamp
  /** The page the walk in progress goes on with; null when no walk is in progress. */
  nextKey: string | null
  /** The newest dateCreated read so far: the next walk starts there. */
  newestSeen: NullableTimestamp
  claimToken: string | null
  claimedUntil: NullableTimestamp
  syncedAt: NullableTimestamp
}

/** At most one row per tenant: the free opt-out number every advertisement carries (RLS). */
export interface SmsAdvertisingSettingsTable {
  tenantId: number
  optOutNumber: string | null
  /** An advertisement reaches only numbers with a live consent (default true). */
  consentRequired: Generated<boolean>
  updatedBy: number | null
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

/** At most one per tenant: where its delivery events go (lib/events; RLS). */
export interface WebhookEndpointsTable {
  tenantId: number
  url: string
  events: string[]
  /** The signing secret, sealed (lib/crypto/seal.ts): never in clear. */
  secretSealed: string
  createdAt: Generated<Date>
  updatedAt: DefaultedTimestamp
}

/** The outbox of delivery events, written by a trigger on sms_messages (RLS). */
export interface WebhookEventsTable {
  tenantId: number
  id: Generated<number>
  /** The `webhook-id` of every attempt (msg_ + this, without dashes). */
  webhookId: Generated<string>
  eventType: string
  /** The JSON body, fixed when the event was written. */
  body: string
  attempts: Generated<number>
  nextAttemptAt: DefaultedTimestamp
  claimToken: string | null
  claimedUntil: NullableTimestamp
  deliveredAt: NullableTimestamp
  givenUpAt: NullableTimestamp
  lastError: string | null
  createdAt: Generated<Date>
}

export type KakaoTemplateStatus = 'PENDING' | 'INSPECTING' | 'APPROVED' | 'REJECTED'

/** At most one per tenant: its Kakao business channel, as the provider described it when linked (lib/kakao; RLS). */
export interface KakaoChannelsTable {
  tenantId: number
  /** The provider's channelId. */
  pfId: string
  searchId: string
  linkedAt: DefaultedTimestamp
  updatedAt: DefaultedTimestamp
}

/** A template imported from the provider, refreshed on demand (lib/kakao; RLS). */
export interface KakaoTemplatesTable {
  tenantId: number
  id: Generated<number>
  providerTemplateId: string
  name: string
  content: string
  /** The names inside `#{...}` of content, in order of first use. */
  variables: string[]
  /** As the provider gave them; written as JSON text. */
  buttons: ColumnType<unknown[], string | undefined, string>
  status: KakaoTemplateStatus
  /** The channel the copy was read under (null: none linked since); only that channel can send it. */
  pfId: string | null
  refreshedAt: DefaultedTimestamp
  createdAt: Generated<Date>
}

/** A user's passkey: a WebAuthn credential the user's device keeps (lib/passkeys; RLS). */
export interface PasskeysTable {
  tenantId: number
  id: Generated<number>
  userId: number
  /** The authenticator's credential id, base64url. */
  credentialId: string
  /** The credential's public key, COSE-encoded as the authenticator gave it. */
  publicKey: Buffer
  /** The last signature counter seen (0 for authenticators without one). */
  counter: Generated<number>
  transports: Generated<string[]>
  backedUp: Generated<boolean>
  name: string
  createdAt: Generated<Date>
  lastUsedAt: NullableTimestamp
}

/** Credential id -> (tenant, user), read before any tenant is known; no RLS, written only by a trigger on passkeys. */
export interface PasskeyDirectoryTable {
  credentialId: string
  tenantId: number
  userId: number
  createdAt: Generated<Date>
}

/** A user's live passkey creation challenge, as SHA-256 (RLS). */
export interface PasskeyEnrolmentChallengesTable {
  tenantId: number
  userId: number
  challengeHash: string
  expiresAt: Timestamp
  createdAt: Generated<Date>
}

/** A passkey sign-in's request challenge, as SHA-256, before any tenant is known (no tenant_id, no RLS). */
export interface PasskeySignInChallengesTable {
  id: string
  challengeHash: string
  expiresAt: Timestamp
  createdAt: Generated<Date>
}

/** An integrator's key (lib/api-keys/): only its SHA-256 is kept. Under RLS. */
export interface ApiKeysTable {
  tenantId: number
  id: Generated<number>
  /** The part of the key that finds it in api_key_directory; not enough to use the key. */
  lookupId: string
  name: string
  scopes: string[]
  /** What the list shows: `svck_` and the first characters of the key. */
  prefix: string
  keyHash: Buffer
  createdBy: number
  createdAt: Generated<Date>
  expiresAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
}

/** lookup_id -> the key's tenant and id, without RLS; filled by a trigger, read only through svc_api_key_directory. */
export interface ApiKeyDirectoryTable {
  lookupId: string
  tenantId: number
  apiKeyId: number
}

export interface DB {
  tenants: TenantsTable
  ownerDirectory: OwnerDirectoryTable
  users: UsersTable
  sessions: SessionsTable
  sessionRevocations: SessionRevocationsTable
  revokedAccessTokens: RevokedAccessTokensTable
  usedInternalSignatures: UsedInternalSignaturesTable
  loginFailures: LoginFailuresTable
  userLoginFailures: UserLoginFailuresTable
  rateLimitWindows: RateLimitWindowsTable
  smsSenderSettings: SmsSenderSettingsTable
  smsTemplates: SmsTemplatesTable
  recipientGroups: RecipientGroupsTable
  recipientGroupMembers: RecipientGroupMembersTable
  smsMessages: SmsMessagesTable
  smsRecipients: SmsRecipientsTable
  classes: ClassesTable
  classEnrollments: ClassEnrollmentsTable
  idempotencyKeys: IdempotencyKeysTable
  smsMessageCounts: SmsMessageCountsTable
  smsIdRanges: SmsIdRangesTable
  smsDailyUsage: SmsDailyUsageTable
  smsUsage: SmsUsageTable
  smsUsageDays: SmsUsageDaysTable
  smsUsageZones: SmsUsageZonesTable
  smsUsageChanges: SmsUsageChangesTable
  auditEvents: AuditEventsTable
  retentionSettings: RetentionSettingsTable
  oneTimeCodes: OneTimeCodesTable
  oneTimeCodeDays: OneTimeCodeDaysTable
  oneTimeCodePhoneDays: OneTimeCodePhoneDaysTable
  phoneVerificationDays: PhoneVerificationDaysTable
  userSecondFactors: UserSecondFactorsTable
  userRecoveryCodes: UserRecoveryCodesTable
  mfaChallenges: MfaChallengesTable
  smsOptOuts: SmsOptOutsTable
  smsAdvertisingSettings: SmsAdvertisingSettingsTable
  smsAdConsents: SmsAdConsentsTable
  smsOptOutSyncs: SmsOptOutSyncsTable
  webhookEndpoints: WebhookEndpointsTable
  webhookEvents: WebhookEventsTable
  kakaoChannels: KakaoChannelsTable
  kakaoTemplates: KakaoTemplatesTable
  passkeys: PasskeysTable
  passkeyDirectory: PasskeyDirectoryTable
  passkeyEnrolmentChallenges: PasskeyEnrolmentChallengesTable
  passkeySignInChallenges: PasskeySignInChallengesTable
  apiKeys: ApiKeysTable
  apiKeyDirectory: ApiKeyDirectoryTable
}
