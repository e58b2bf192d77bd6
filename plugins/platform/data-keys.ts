import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import { isDatabaseUnavailable } from '../../db/errors.js'
import { dataKeysProblem } from '../../lib/data-keys/check.js'
import { dataKeyRingFromEnv } from '../../lib/data-keys/ring-from-env.js'
import type { KeyRing } from '../../lib/crypto/key-ring.js'
import { ConfigError } from '../../lib/env.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Keys for data at rest (lib/data-keys/ring-from-env.ts): they key one-time codes, and the second factor's and the
     * webhooks' keys are derived from them.
     */
    dataKeys: KeyRing
  }
}

/**
 * Checked against what is sealed before anything is served (lib/data-keys/check.ts): a ring that cannot open
 * sealed data stops the start with a ConfigError, so removing a key too early never silently locks a user out. A
 * process with no key at all (outside production only) is not checked: its random key opens nothing sealed before;
 * nor is an app built only for its OpenAPI document, which has no database.
 */
export default fp<AppOptions>(
  async (app, options) => {
    const { ring, source } = dataKeyRingFromEnv(app.env, () =>
      app.log.warn('SVC_DATA_KEYS, SVC_OTP_SECRET and SVC_JWT_SECRET are unset: codes and sealed secrets use a random key that dies with this process'),
    )
    if (source !== 'random' && !options.withoutDatabase) {
      const problem = await dataKeysProblem(app.db, ring).catch((error: unknown) => {
        // A service may start while its database is away (readiness says DOWN until it is back); a start that
        // migrates has reached it already, so this is a start without migration. Nothing sealed can be read
        // meanwhile either, and the next start checks again.
        if (!isDatabaseUnavailable(error)) throw error
        app.log.warn('the database is out of reach: the keys for data at rest were not checked against what is sealed')
        return null
      })
      if (problem !== null) throw new ConfigError([problem])
    }
    app.decorate('dataKeys', ring)
  },
  { name: 'data-keys', dependencies: ['env', 'db'] },
)
