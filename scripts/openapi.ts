import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { openPostgres } from '../db/database.js'
import { loadEnv } from '../lib/env.js'
import { buildService } from '../lib/http/build.js'
import { UsageError } from './run-script.js'

/**
 * npm run -s openapi > openapi.json       or       npm run -s openapi -- openapi.json
 * The OpenAPI document as GET /openapi.json serves it, without a running service or a database: the document
 * depends only on the routes, so the app is built on a pool that never connects (nothing queries before a
 * request) and closed again. Fixed settings, not the environment's, so every machine writes the same document.
 */
async function main(): Promise<void> {
  const [file, ...rest] = process.argv.slice(2)
  if (rest.length > 0) throw new UsageError('usage: npm run -s openapi [-- FILE] (stdout without FILE)')
  const env = loadEnv({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'postgres://openapi@127.0.0.1:1/never-connected',
    SVC_JWT_SECRET: randomBytes(32).toString('hex'),
    SVC_SMS_DISPATCHER: 'off',
    SVC_MIGRATE_ON_START: 'false',
  })
  const app = await buildService(env, openPostgres(env.DATABASE_URL!, 1))
  try {
    const document = `${JSON.stringify(app.swagger(), null, 2)}\n`
    if (file) writeFileSync(file, document)
    else process.stdout.write(document)
  } finally {
    await app.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
