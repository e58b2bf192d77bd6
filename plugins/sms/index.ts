import fp from 'fastify-plugin'
import type { AppOptions } from '../../app.js'
import smsRetention from './sms-retention.js'

/**
 * SMS sending: messages, recipients, templates, groups, history and sender numbers; this plugin runs the history's
 * retention and partition upkeep. Routes: routes/v1/sms/send.ts, routes/v1/sms/history.ts,
 * routes/v1/sms/recipient-groups.ts, routes/v1/sms/sender-setting.ts, routes/v1/sms-templates/index.ts,
 * routes/internal/sms/sender-settings.ts. Logic: lib/sms/. Repositories: db/repos/sms/.
 * Advertising, whose routes share the /v1/sms prefix, is plugins/advertising/index.ts.
 */
export default fp<AppOptions>(
  async (app, options) => {
    await app.register(smsRetention, options)
  },
  { name: 'sms', dependencies: ['db'] },
)
