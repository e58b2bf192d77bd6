import { openDatabase } from '../db/open.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { runScript } from './run-script.js'

await runScript(async () => {
  loadDotEnv()
  const database = await openDatabase(loadEnv())
  try {
    await database.migrate()
    return { migrated: true, database: database.kind }
  } finally {
    await database.close()
  }
})
