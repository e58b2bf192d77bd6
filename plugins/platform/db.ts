import fp from 'fastify-plugin'
import type { Kysely } from 'kysely'
import type { AppOptions } from '../../app.js'
import type { Database } from '../../db/database.js'
import type { DB } from '../../db/schema.js'
import { createDatabaseOutage, type DatabaseOutage } from '../../lib/observability/database-outage.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Root handle: only for tables without RLS (tenants, owner directory) and for opening tenant transactions. */
    db: Kysely<DB>
    database: Database
    /**
     * Where a database failure that is not the caller's fault (isDatabaseUnavailable) is reported instead of logged,
     * and where a success ends the outage (lib/observability/database-outage.ts).
     */
    databaseOutage: DatabaseOutage
  }
}

export default fp<AppOptions>(
  async (app, options) => {
    app.decorate('db', options.database.db)
    app.decorate('database', options.database)
    // Beside the handle every plugin already depends on: whatever reaches the database can report what it saw.
    app.decorate('databaseOutage', createDatabaseOutage(app.log.child({ component: 'database' })))
    // Last hook to run on close: in-flight requests have finished, so the pool can go.
    app.addHook('onClose', async () => {
      await options.database.close()
    })
  },
  { name: 'db', dependencies: ['env'] },
)
