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
}
