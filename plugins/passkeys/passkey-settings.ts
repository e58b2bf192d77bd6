import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../lib/errors.js'
import { passkeySettings, type PasskeySettings } from '../../lib/passkeys/settings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The relying party of passkeys (SVC_WEBAUTHN_*), or null when passkeys are off. */
    passkeys: PasskeySettings | null
    /** The passkey settings for a passkey route; 404 PASSKEYS_DISABLED when passkeys are off. */
    requirePasskeys(): PasskeySettings
    /** An onRequest hook for the passkey routes' files: 404 PASSKEYS_DISABLED before any budget or body is spent. */
    passkeysEnabled(request: FastifyRequest): Promise<void>
  }
}

export default fp(
  async (app) => {
    const settings = passkeySettings(app.env)
    const require = (): PasskeySettings => {
      if (!settings) throw new AppError('PASSKEYS_DISABLED')
      return settings
    }
    app.decorate('passkeys', settings)
    app.decorate('requirePasskeys', require)
    app.decorate('passkeysEnabled', async () => {
      require()
    })
  },
  { name: 'passkey-settings', dependencies: ['env'] },
)
