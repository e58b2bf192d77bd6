import { EmbeddedStoreInUseError } from './db/embedded-lock.js'
import { openDatabase } from './db/open.js'
import { ConfigError, loadDotEnv, loadEnv } from './lib/env.js'
import { CLOSE_TIMEOUT_MS } from './lib/shutdown-budget.js'
import { buildService } from './build.js'

async function main(): Promise<void> {
  loadDotEnv()
  const env = loadEnv()
  const database = await openDatabase(env)
  if (env.SVC_MIGRATE_ON_START) await database.migrate()
  const app = await buildService(env, database)
  // The embedded store is for development only; say so where an operator looks first.
  if (database.warning) app.log.warn(database.warning)

  let closing = false
  const close = (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    setTimeout(() => {
      app.log.error('shutdown timed out')
      process.exit(1)
    }, CLOSE_TIMEOUT_MS).unref()
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', () => close('SIGTERM'))
  process.once('SIGINT', () => close('SIGINT'))

  await app.listen({ host: env.HOST, port: env.PORT })
}

main().catch((error: unknown) => {
  // A configuration error or a store in use is the operator's to fix: print what to do, not a stack trace.
  if (error instanceof EmbeddedStoreInUseError) console.error(`error: ${error.message}`)
  else console.error(error instanceof ConfigError ? error.message : error)
  process.exit(1)
})
