import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import authContract from './auth-contract.js'
import auth from './auth.js'

/**
 * Sign-in and sessions: the access token's verification and the caller it names (`request.identity`), and the
 * in-process contract other modules call. Routes: routes/v1/login.ts, routes/v1/refresh.ts, routes/v1/logout.ts,
 * routes/v1/me/sessions.ts, routes/v1/me/profile.ts, routes/well-known.ts. Logic: lib/sign-in/. Repositories:
 * db/repos/sign-in/.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(auth, options)
    await app.register(authContract, options)
  },
  { name: 'sign-in', dependencies: ['env', 'access', 'cors', 'db', 'cookie', 'tenant-tx', 'closing', 'api-keys'] },
)
