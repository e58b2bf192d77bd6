import fp from 'fastify-plugin'
import type { CodeIssuing } from '../lib/otp/issue-code.js'
import { codeKeyFromEnv } from '../lib/otp/code-key.js'
import { oneTimeCodeSettings } from '../lib/otp/settings.js'
import { systemSmsSettings } from '../lib/sms/system-messages.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What issuing and checking one-time codes needs (lib/otp): the code key and limits, and the code SMS's settings. */
    oneTimeCodes: CodeIssuing
  }
}

/** The code key is built once, at start: a production start without one fails here (lib/otp/code-key.ts). */
export default fp(
  async (app) => {
    const { key } = codeKeyFromEnv(app.env, () =>
      app.log.warn('SVC_OTP_SECRET and SVC_JWT_SECRET are unset: one-time codes use a random key that dies with this process'),
    )
    app.decorate('oneTimeCodes', { codes: oneTimeCodeSettings(app.env, key), sms: systemSmsSettings(app.env) })
  },
  { name: 'one-time-codes', dependencies: ['env'] },
)
