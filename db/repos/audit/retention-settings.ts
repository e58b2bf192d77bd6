import { sql, type Kysely } from 'kysely'
import type { DB } from '../../schema.js'

// The retention the purges apply (db/functions/svc_purge_audit_events.sql, svc_purge_old_sms.sql): one row that only
// the owner may write, so no runtime statement can choose how much of every tenant's history a purge erases.

/** Days kept; 0 keeps everything. */
export interface RetentionSettings {
  auditDays: number
  smsDays: number
}

/**
 * As the owner: the retention every purge applies from now on, whichever instance runs it. Plain SQL, since the
 * migrator's handle may have no CamelCasePlugin.
 */
export async function storeRetentionSettings(owner: Kysely<any>, settings: RetentionSettings): Promise<void> {
  await sql`
    update retention_settings set audit_days = ${settings.auditDays}, sms_days = ${settings.smsDays}, updated_at = now()`.execute(owner)
}

/** The stored retention (the runtime role may read it, never write it). */
export async function readRetentionSettings(db: Kysely<DB>): Promise<RetentionSettings> {
  return db.selectFrom('retentionSettings').select(['auditDays', 'smsDays']).executeTakeFirstOrThrow()
}
