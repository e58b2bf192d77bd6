import fp from 'fastify-plugin'
import { recoveryRequests, type RecoveryRequests } from '../../lib/account-security/recovery/recovery-requests.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Password-reset code requests, worked off after their answer (lib/account-security/recovery/recovery-requests.ts). */
    passwordRecovery: RecoveryRequests
  }
}

export default fp(
  async (app) => {
    const deps = { db: app.db, env: app.env, issuing: app.oneTimeCodes, secondFactor: app.secondFactors }
    const requests = recoveryRequests(deps, { onQueued: () => app.dispatcher.kick(), outage: app.databaseOutage })
    app.decorate('passwordRecovery', requests)
    // Before the pool closes (the db plugin's hook runs last): requests already answered still get their code.
    app.addHook('onClose', async () => {
      await requests.settled()
    })
  },
  { name: 'password-recovery', dependencies: ['env', 'db', 'one-time-codes', 'second-factor', 'dispatcher'] },
)
