import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { AppOptions } from '../app.js'
import type { Database } from '../db/database.js'
import type { DB } from '../db/schema.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Root handle: only for tables without RLS (tenants, owner directory) and for opening tenant transactions. */
    db: Kysely<DB>
    database: Database
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    app.decorate('db', options.database.db)
    app.decorate('database', options.database)
    // Last hook to run on close: in-flight requests have finished, so the pool can go.
    app.addHook('onClose', async () => {
      await options.database.close()
    })
  },
  { name: 'db', dependencies: ['env'] },
)
