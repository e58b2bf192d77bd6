import fp from 'fastify-plugin'
import type { CodeIssuing } from '../../lib/account-security/codes/issue-code.js'
import { oneTimeCodeSettings } from '../../lib/account-security/codes/settings.js'
import { systemSmsSettings } from '../../lib/dispatch/system-messages.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What issuing and checking one-time codes needs (lib/account-security/codes): keys and limits, and the code SMS's settings. */
    oneTimeCodes: CodeIssuing
  }
}

/** The codes are keyed by the data keys (plugins/platform/data-keys.ts), built once at start. */
export default fp(
  async (app) => {
    app.decorate('oneTimeCodes', { codes: oneTimeCodeSettings(app.env, app.dataKeys), sms: systemSmsSettings(app.env) })
  },
  { name: 'one-time-codes', dependencies: ['env', 'data-keys'] },
)
