import { randomBytes } from 'node:crypto'
import { openPostgres } from '../../db/database.js'
import { loadEnv } from '../env.js'
import { buildService } from '../../build.js'

/**
 * The OpenAPI document as GET /openapi.json serves it, without a running service or a database: the document
 * depends only on the routes, so the app is built on a pool that never connects (nothing queries before a
 * request) and closed again. Fixed settings, not the environment's, so every machine writes the same document.
 */
export async function standaloneDocument(): Promise<unknown> {
  const env = loadEnv({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DATABASE_URL: 'postgres://openapi@127.0.0.1:1/never-connected',
    SVC_JWT_SECRET: randomBytes(32).toString('hex'),
    SVC_SMS_DISPATCHER: 'off',
    SVC_MIGRATE_ON_START: 'false',
  })
  const app = await buildService(env, openPostgres(env.DATABASE_URL!, 1), undefined, { withoutDatabase: true })
  try {
    return app.swagger()
  } finally {
    await app.close()
  }
}
