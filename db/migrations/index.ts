import type { Migration } from 'kysely/migration'
import * as foundation from './2026-11-22T00-00-00-foundation.js'
import * as authSessions from './2026-11-22T01-00-00-auth-sessions.js'
import * as sms from './2026-11-22T02-00-00-sms.js'
import * as historySortIndexes from './2026-11-22T03-00-00-history-sort-indexes.js'
import * as smsMessageCounts from './2026-11-22T04-00-00-sms-message-counts.js'
import * as unloggedLoginGuards from './2026-11-22T04-10-00-unlogged-login-guards.js'
import * as sessionRotation from './2026-11-22T05-10-00-session-rotation.js'
import * as loginStatements from './2026-11-22T05-20-00-login-statements.js'
import * as revokedTokenRefusal from './2026-11-23T00-00-00-revoked-token-refusal.js'
import * as dispatchLeases from './2026-11-23T02-00-00-dispatch-leases.js'
import * as requestScopeStatus from './2026-11-23T03-00-00-request-scope-status.js'
import * as refreshReuseGrace from './2026-11-23T03-10-00-refresh-reuse-grace.js'
import * as loginIdKeys from './2026-11-23T03-20-00-login-id-keys.js'
import * as smsDailyUsage from './2026-11-23T04-00-00-sms-daily-usage.js'
import * as dispatchHolds from './2026-11-23T04-10-00-dispatch-holds.js'
import * as recipientProviderGroup from './2026-11-23T04-20-00-recipient-provider-group.js'
import * as usedInternalSignatures from './2026-11-23T05-00-00-used-internal-signatures.js'
import * as dispatchStats from './2026-11-23T06-00-00-dispatch-stats.js'
import * as pendingSenders from './2026-11-23T06-10-00-pending-senders.js'
import * as requestScopeFunction from './2026-11-23T07-00-00-request-scope-function.js'
import * as currentUserFunction from './2026-11-23T08-00-00-current-user-function.js'
import * as systemMessages from './2026-11-26T00-00-00-system-messages.js'
import * as userLoginFailures from './2026-11-26T01-00-00-user-login-failures.js'
import * as runtimeGrants from './2026-11-26T02-00-00-runtime-grants.js'
import * as tenantDailyQuota from './2026-11-26T03-00-00-tenant-daily-quota.js'
import * as auditEvents from './2026-11-26T04-00-00-audit-events.js'
import * as smsUsage from './2026-11-26T04-10-00-sms-usage.js'
import * as ownerMaintenancePolicy from './2026-11-26T04-20-00-owner-maintenance-policy.js'
import * as oneTimeCodes from './2026-11-26T05-00-00-one-time-codes.js'
import * as secondFactor from './2026-11-27T00-00-00-second-factor.js'
import * as advertising from './2026-11-28T00-00-00-advertising.js'
import * as webhooks from './2026-11-28T01-00-00-webhooks.js'
import * as openProviderGroup from './2026-11-28T02-00-00-open-provider-group.js'
import * as smsIdRanges from './2026-11-28T03-00-00-sms-id-ranges.js'
import * as phoneChangeGuards from './2026-11-29T00-00-00-phone-change-guards.js'
import * as auditEventActorIndexes from './2026-11-29T01-00-00-audit-event-actor-indexes.js'
import * as retentionSettings from './2026-11-29T01-10-00-retention-settings.js'
import * as webhookLiveClaims from './2026-11-29T03-00-00-webhook-live-claims.js'
import * as recoveryCodeKeys from './2026-11-29T05-00-00-recovery-code-keys.js'
import * as kakaoChannelsTemplates from './2026-11-29T06-00-00-kakao-channels-templates.js'
import * as alimtalkSends from './2026-11-29T07-00-00-alimtalk-sends.js'
import * as alimtalkUsage from './2026-11-29T07-10-00-alimtalk-usage.js'
import * as kakaoTemplateChannel from './2026-11-29T07-20-00-kakao-template-channel.js'
import * as adConsents from './2026-11-29T08-00-00-ad-consents.js'
import * as apiKeys from './2026-11-29T09-00-00-api-keys.js'
import * as passkeys from './2026-11-29T10-00-00-passkeys.js'

/**
 * Migrations in order. Listed by hand (not read from the folder) so the same list works from TypeScript
 * sources in tests and from compiled JavaScript in production. Names are frozen: never rename one.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-22T00-00-00-foundation': foundation,
  '2026-11-22T01-00-00-auth-sessions': authSessions,
  '2026-11-22T02-00-00-sms': sms,
  '2026-11-22T03-00-00-history-sort-indexes': historySortIndexes,
  '2026-11-22T04-00-00-sms-message-counts': smsMessageCounts,
  '2026-11-22T04-10-00-unlogged-login-guards': unloggedLoginGuards,
  '2026-11-22T05-10-00-session-rotation': sessionRotation,
  '2026-11-22T05-20-00-login-statements': loginStatements,
  '2026-11-23T00-00-00-revoked-token-refusal': revokedTokenRefusal,
  '2026-11-23T02-00-00-dispatch-leases': dispatchLeases,
  '2026-11-23T03-00-00-request-scope-status': requestScopeStatus,
  '2026-11-23T03-10-00-refresh-reuse-grace': refreshReuseGrace,
  '2026-11-23T03-20-00-login-id-keys': loginIdKeys,
  '2026-11-23T04-00-00-sms-daily-usage': smsDailyUsage,
  '2026-11-23T04-10-00-dispatch-holds': dispatchHolds,
  '2026-11-23T04-20-00-recipient-provider-group': recipientProviderGroup,
  '2026-11-23T05-00-00-used-internal-signatures': usedInternalSignatures,
  '2026-11-23T06-00-00-dispatch-stats': dispatchStats,
  '2026-11-23T06-10-00-pending-senders': pendingSenders,
  '2026-11-23T07-00-00-request-scope-function': requestScopeFunction,
  '2026-11-23T08-00-00-current-user-function': currentUserFunction,
  '2026-11-26T00-00-00-system-messages': systemMessages,
  '2026-11-26T01-00-00-user-login-failures': userLoginFailures,
  '2026-11-26T02-00-00-runtime-grants': runtimeGrants,
  '2026-11-26T03-00-00-tenant-daily-quota': tenantDailyQuota,
  '2026-11-26T04-00-00-audit-events': auditEvents,
  '2026-11-26T04-10-00-sms-usage': smsUsage,
  '2026-11-26T04-20-00-owner-maintenance-policy': ownerMaintenancePolicy,
  '2026-11-26T05-00-00-one-time-codes': oneTimeCodes,
  '2026-11-27T00-00-00-second-factor': secondFactor,
  '2026-11-28T00-00-00-advertising': advertising,
  '2026-11-28T01-00-00-webhooks': webhooks,
  '2026-11-28T02-00-00-open-provider-group': openProviderGroup,
  '2026-11-28T03-00-00-sms-id-ranges': smsIdRanges,
  '2026-11-29T00-00-00-phone-change-guards': phoneChangeGuards,
  '2026-11-29T01-00-00-audit-event-actor-indexes': auditEventActorIndexes,
  '2026-11-29T01-10-00-retention-settings': retentionSettings,
  '2026-11-29T03-00-00-webhook-live-claims': webhookLiveClaims,
  '2026-11-29T05-00-00-recovery-code-keys': recoveryCodeKeys,
  '2026-11-29T06-00-00-kakao-channels-templates': kakaoChannelsTemplates,
  '2026-11-29T07-00-00-alimtalk-sends': alimtalkSends,
  '2026-11-29T07-10-00-alimtalk-usage': alimtalkUsage,
  '2026-11-29T07-20-00-kakao-template-channel': kakaoTemplateChannel,
  '2026-11-29T08-00-00-ad-consents': adConsents,
  '2026-11-29T09-00-00-api-keys': apiKeys,
  '2026-11-29T10-00-00-passkeys': passkeys,
}
