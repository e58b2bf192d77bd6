import fp from 'fastify-plugin'
import passkeySettings from './passkey-settings.js'

/**
 * Passkeys (WebAuthn): enrolment by a signed-in user (with the password) and sign-in with a discoverable
 * credential, which opens the session exactly as a password login does (lib/sign-in/open-session.ts); this plugin
 * decorates the relying party's settings (app.passkeys, 404 PASSKEYS_DISABLED without them). Routes:
 * routes/v1/me/passkeys.ts, routes/v1/login-passkey.ts. Logic: lib/passkeys/ (the ceremonies through
 * @simplewebauthn/server in lib/passkeys/ceremony.ts). Repositories: db/repos/passkeys/ (passkey_directory, read
 * before any tenant is known, is written by a trigger on passkeys: db/functions/svc_sync_passkey_directory.sql).
 */
export default fp(
  async (app) => {
    await app.register(passkeySettings)
  },
  { name: 'passkeys', dependencies: ['env', 'db', 'tenant-tx', 'sign-in'] },
)
