import { openDatabase } from '../db/open.js'
import { listPendingSenderNumbers } from '../db/repos/sms/sender-settings.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run sender:pending
 * The sender numbers awaiting a decision, oldest first, as a JSON array of {slug, tenantName, senderNumber,
 * requestedAt, inUseBy}; decide each with scripts/approve-sender.sh SLUG APPROVED|REJECTED NUMBER [REASON], NUMBER
 * being the senderNumber listed (the one reviewed). inUseBy names the tenant for which the same number is already
 * APPROVED: such an approval is refused, since all tenants send through one provider account. Runs as the runtime
 * role (DATABASE_URL): the cross-tenant read goes through one SECURITY DEFINER function, never the owner's credentials.
 */
await runScript(async () => {
  if (process.argv.length > 2) throw new UsageError('usage: npm run sender:pending (takes no arguments)')
  loadDotEnv()
  const env = loadEnv()
  const database = await openDatabase(env)
  try {
    const pending = await listPendingSenderNumbers(database.db)
    return pending.map((row) => ({ ...row, requestedAt: row.requestedAt.toISOString() }))
  } finally {
    await database.close()
  }
})
