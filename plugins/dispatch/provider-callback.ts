import fp from 'fastify-plugin'
import { AppError } from '../../lib/errors.js'
import { policyOf } from '../../lib/http/access.js'
import { isValidProviderSecret } from '../../lib/dispatch/delivery/provider-secret.js'

/**
 * The SMS provider's calls (`access: 'provider-callback'`) prove themselves with X-Provider-Secret, the SHA-1 of
 * SVC_SMS_EXTSMS_WEBHOOK_TOKEN (docs/provider.md#delivery-reports). Checked on request, before the body is read:
 * an unauthenticated caller learns nothing about body validation. Without a configured token every call is refused.
 */
export default fp(
  async (app) => {
    const webhookToken = app.env.SVC_SMS_EXTSMS_WEBHOOK_TOKEN
    // A callback, not an async function: it runs on every request (docs/architecture.md#what-every-request-pays).
    app.addHook('onRequest', (request, _reply, done) => {
      if (policyOf(request.routeOptions.config).credential !== 'provider-secret') return done()
      const presented = request.headers['x-provider-secret']
      if (!isValidProviderSecret(typeof presented === 'string' ? presented : undefined, webhookToken)) {
        return done(new AppError('WEBHOOK_SECRET_INVALID'))
      }
      done()
    })
  },
  { name: 'provider-callback', dependencies: ['env', 'access', 'cors', 'closing'] },
)
