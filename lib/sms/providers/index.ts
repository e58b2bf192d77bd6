import type { Env } from '../../env.js'
import { createExtSmsProvider } from './extsms.js'
import { createMockProvider } from './mock.js'
import type { SmsProvider } from './provider.js'

/** The configured provider; lib/env.ts has already refused an extsms setup with missing credentials. */
export function createProvider(env: Env): SmsProvider {
  if (env.SVC_SMS_PROVIDER === 'mock') return createMockProvider()
  return createExtSmsProvider({
    apiKey: env.SVC_SMS_EXTSMS_API_KEY!,
    apiSecret: env.SVC_SMS_EXTSMS_API_SECRET!,
    baseUrl: env.SVC_SMS_EXTSMS_BASE_URL!,
  })
}
