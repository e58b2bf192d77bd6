import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { expect, vi } from 'vitest'
import type { FakeSentMessage } from '../support/fakes/extsms-server.js'
import { fakeExtSmsCredentials } from '../dispatch/dispatch-test-bed.js'
import { buildAppWith } from '../support/helper.js'
import { RefreshGate } from './refresh-gate.js'

/** One answer as the service sent it, whether or not the browser let the page read it. */
export interface Answered {
  origin: string | undefined
  request: string
  status: number
}

export interface Service {
  /** `http://127.0.0.1:<port>` */
  url: string
  app: FastifyInstance
  refreshGate: RefreshGate
  /** Every answer so far, oldest first: `request` is `METHOD /path`. */
  answered: Answered[]
  close(): Promise<void>
}

/**
 * The production app on the run's test database (test/support/helper.ts), listening on 127.0.0.1 and a free port, so a real
 * browser talks to it over HTTP with real cookies. The only additions are test hooks that watch: the refresh gate
 * holds requests (and changes nothing in them), and every answer is noted.
 */
export async function startService(overrides: Record<string, string>): Promise<Service> {
  const refreshGate = new RefreshGate()
  const answered: Answered[] = []
  const app = await buildAppWith(async () => undefined, overrides, (bare) => {
    bare.addHook('onRequest', refreshGate.onRequest)
    bare.addHook('onResponse', async (request, reply) => {
      answered.push({ origin: request.headers.origin, request: `${request.method} ${request.url.split('?')[0]}`, status: reply.statusCode })
    })
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, app, refreshGate, answered, close: () => app.close() }
}

/**
 * The service sending its own SMS (codes) through the live adapter to the loopback fake provider `provider`, from
 * SVC_SMS_SYSTEM_SENDER, with its dispatcher on, for pages served by `site`.
 */
export function startServiceSendingTo(
  provider: { iso: { url: string }; fake: { url: string } },
  site: { origin(): string },
  systemSender: string,
  webhookToken: string,
): Promise<Service> {
  return startService({
    DATABASE_URL: provider.iso.url,
    SVC_CORS_ORIGINS: site.origin(),
    SVC_SMS_DISPATCHER: 'on',
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
    SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
    SVC_SMS_EXTSMS_BASE_URL: provider.fake.url,
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: webhookToken,
    SVC_SMS_SYSTEM_SENDER: systemSender,
  })
}

/** The one SMS `phone` receives: what the fake provider was handed, once the service's dispatcher has sent it. */
export function smsTo(fake: { sentMessages: FakeSentMessage[] }, phone: string): Promise<FakeSentMessage> {
  return vi.waitFor(
    () => {
      const sent = fake.sentMessages.filter((message) => message.to === phone)
      expect(sent, `an SMS to ${phone}`).toHaveLength(1)
      return sent[0]!
    },
    { timeout: 10_000, interval: 50 },
  )
}
