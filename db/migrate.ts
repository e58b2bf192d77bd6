import type { Kysely } from 'kysely'
import { Migrator, type MigrationResultSet } from 'kysely/migration'
import { applyFunctionFiles, type AppliedFunctions } from './function-files.js'
import { migrations } from './migrations/index.js'
import { storeRetentionSettings, type RetentionSettings } from './repos/audit/retention-settings.js'
import { prepareRanges } from './repos/sms/sms-retention.js'

/**
 * Applies every pending migration (tables, indexes, policies: frozen history), then every SQL function's current
 * definition from db/functions, then creates the SMS tables' ranges of ids ahead (db/repos/sms/sms-retention.ts: so a
 * scheduled `npm run migrate` keeps them where no instance may act as the owner), then stores `retention` when given
 * (the environment's SVC_AUDIT_RETENTION_DAYS and SVC_SMS_RETENTION_DAYS: whoever migrates sets what every purge
 * applies); throws with the failing migration's or file's name when one fails.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  retention?: RetentionSettings,
): Promise<MigrationResultSet & { functions: AppliedFunctions }> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const result = await migrator.migrateToLatest()
  if (result.error) {
    const failed = result.results?.find((entry) => entry.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(result.error)}`, {
      cause: result.error,
    })
  }
  const functions = await applyFunctionFiles(db)
  await prepareRanges(db)
  if (retention) await storeRetentionSettings(db, retention)
  return { ...result, functions }
}
