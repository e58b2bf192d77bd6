import fp from 'fastify-plugin'
import { createAuthContract, type AuthContract } from '../../lib/sign-in/contract.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The in-process authentication contract (lib/sign-in/contract.ts) for other modules of this service. */
    authContract: AuthContract
  }
}

export default fp(
  async (app) => {
    app.decorate('authContract', createAuthContract(app.authDeps))
  },
  { name: 'auth-contract', dependencies: ['auth'] },
)
