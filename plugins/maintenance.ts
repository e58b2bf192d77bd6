import fp from 'fastify-plugin'
import { sql } from 'kysely'
import cron from 'node-cron'
import { purgeUsedSignatures } from '../db/repos/used-internal-signatures.js'

// Once a minute is plenty: expired rows are already ignored by every read, this only keeps tables small.
const PURGE_SCHEDULE = '0 * * * * *'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Deletes expired revocations, blacklist entries, sessions, lockouts, rate windows and used internal signatures;
     * returns the count.
     */
    purgeExpired(): Promise<number>
  }
}

export default fp(
  async (app) => {
    const purgeExpired = async () => {
      const { rows } = await sql<{ purged: number }>`select svc_purge_expired() as purged`.execute(app.db)
      // Its own statement (no RLS, nothing to hide from the runtime role): svc_purge_expired stays as it is.
      return (rows[0]?.purged ?? 0) + (await purgeUsedSignatures(app.db))
    }
    app.decorate('purgeExpired', purgeExpired)
    const task = cron.schedule(
      PURGE_SCHEDULE,
      async () => {
        try {
          const purged = await purgeExpired()
          if (purged > 0) app.log.debug({ purged }, 'purged expired rows')
        } catch (error) {
          app.log.warn({ err: error }, 'purge of expired rows failed')
        }
      },
      { name: 'purge-expired', noOverlap: true, unref: true },
    )
    app.addHook('onClose', async () => {
      await task.destroy()
    })
  },
  { name: 'maintenance', dependencies: ['db'] },
)
