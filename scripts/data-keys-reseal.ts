import { openDatabase } from '../db/open.js'
import { dataKeyRingFromEnv } from '../lib/data-keys/ring-from-env.js'
import { resealAll } from '../lib/data-keys/reseal.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run -s data-keys:reseal
 * Re-seals every sealed value (TOTP secrets, pending enrolments, recovery codes' keys, webhook secrets) under the first
 * key of the service's ring, and prints {firstKid, resealed, unopenable, sealedByKid}: counts per kind, then what each
 * key still seals. Runs with the service's own settings, as the runtime role (DATABASE_URL), beside running instances,
 * and any number of times (docs/operations.md#rotating-data-keys). A value no key opens is left as it is, and exits 1.
 */
await runScript(async () => {
  if (process.argv.length > 2) throw new UsageError('usage: npm run -s data-keys:reseal (takes no arguments)')
  loadDotEnv()
  const env = loadEnv()
  const { ring, source } = dataKeyRingFromEnv(env)
  // A key made up for this process would die with it, and everything moved under it with the key.
  if (source === 'random') throw new UsageError('no data keys: set SVC_DATA_KEYS (or SVC_OTP_SECRET, SVC_JWT_SECRET) as the service has them')
  const database = await openDatabase(env)
  try {
    const report = await resealAll(database.db, ring)
    const unopenable = Object.values(report.unopenable).reduce((sum, count) => sum + count, 0)
    if (unopenable > 0) {
      process.stderr.write(`error: ${unopenable} sealed value(s) open with no key of the ring and were left as they are (see "unopenable")\n`)
      process.exitCode = 1
    }
    return report
  } finally {
    await database.close()
  }
})
