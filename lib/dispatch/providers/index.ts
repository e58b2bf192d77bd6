import type { FastifyBaseLogger } from 'fastify'
import type { Env } from '../../env.js'
import { createExtSmsKakaoReads } from './extsms-kakao.js'
import { createExtSmsProvider } from './extsms.js'
import type { KakaoReads } from './kakao-reads.js'
import { createMockProvider } from './mock.js'
import { createMockKakaoReads } from './mock-kakao.js'
import { createExtSmsRefusalList } from './extsms-refusals.js'
import { createMockRefusalList, type RefusalList } from './refusal-list.js'
import type { SmsProvider } from './provider.js'

/**
 * The configured provider; lib/env.ts has already refused an extsms setup with missing credentials. Only the mock in
 * development writes system messages' text to `log` (a developer has no phone to receive a code on); nothing else
 * ever logs it.
 */
export function createProvider(env: Env, log: FastifyBaseLogger): SmsProvider {
  if (env.SVC_SMS_PROVIDER === 'mock') {
    return createMockProvider(env.NODE_ENV === 'development' ? { revealSystemTextTo: log } : {})
  }
  return createExtSmsProvider({
    apiKey: env.SVC_SMS_EXTSMS_API_KEY!,
    apiSecret: env.SVC_SMS_EXTSMS_API_SECRET!,
    baseUrl: env.SVC_SMS_EXTSMS_BASE_URL!,
    timeoutMs: env.SVC_SMS_PROVIDER_TIMEOUT_MS,
  })
}

/** The configured provider's Kakao reads (docs/provider.md#kakao-reads). */
export function createKakaoReads(env: Env): KakaoReads {
  if (env.SVC_SMS_PROVIDER === 'mock') return createMockKakaoReads()
  return createExtSmsKakaoReads({
    apiKey: env.SVC_SMS_EXTSMS_API_KEY!,
    apiSecret: env.SVC_SMS_EXTSMS_API_SECRET!,
    baseUrl: env.SVC_SMS_EXTSMS_BASE_URL!,
    timeoutMs: env.SVC_SMS_PROVIDER_TIMEOUT_MS,
  })
}

/** The configured provider's 080 refusal list (docs/provider.md#the-080-refusal-list). */
export function createRefusalList(env: Env): RefusalList {
  if (env.SVC_SMS_PROVIDER === 'mock') return createMockRefusalList()
  return createExtSmsRefusalList({
    apiKey: env.SVC_SMS_EXTSMS_API_KEY!,
    apiSecret: env.SVC_SMS_EXTSMS_API_SECRET!,
    baseUrl: env.SVC_SMS_EXTSMS_BASE_URL!,
    timeoutMs: env.SVC_SMS_PROVIDER_TIMEOUT_MS,
  })
}
