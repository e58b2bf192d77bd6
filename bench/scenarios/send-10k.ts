/**
 * POST /v1/sms/send with 10,000 recipients, one request at a time (each with a fresh Idempotency-Key), on an
 * API-only instance (SVC_SMS_DISPATCHER=off, the mock provider) so that only the request path is measured.
 * Target: median < 1 s per request.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { bodyFile, type LoadSpec } from '../lib/load.js'
import { bearer, heading, measuredRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { measureOnFreshService, type Requests } from '../lib/service-scenario.js'

export const RECIPIENTS = 10_000

export function sendBody(recipients: number): string {
  return JSON.stringify({
    title: 'Bench',
    content: 'Hello {name}, see you in class {className}.',
    recipients: Array.from({ length: recipients }, (_, i) => {
      const digits = String(10_000_000 + i)
      return { phone: `010-${digits.slice(0, 4)}-${digits.slice(4)}`, name: `Student ${i}`, className: 'Math A', recipientRole: 'GUARDIAN' }
    }),
  })
}

/** A send of `recipients` recipients on every request, each with a fresh Idempotency-Key, one staff member per connection. */
export function sendRequests(connectionHeaders: Record<string, string>[], recipients: number): Requests {
  return {
    method: 'POST',
    path: '/v1/sms/send',
    headers: { 'content-type': 'application/json' },
    body: sendBody(recipients),
    connectionHeaders,
    uniqueHeader: 'idempotency-key',
  }
}

/** `amount` sends of the body in `body` (a file: 10,000 recipients are megabytes) on one connection, one after another. */
export function oneAtATime(serviceUrl: string, access: string, body: string): LoadSpec {
  return {
    url: serviceUrl,
    method: 'POST',
    path: '/v1/sms/send',
    connections: 1,
    amount: benchConfig.sendRequests,
    headers: { 'content-type': 'application/json', ...bearer(access) },
    bodyFile: body,
    uniqueHeader: 'idempotency-key',
    timeoutSeconds: 60,
  }
}

export async function send10k(ctx: BenchContext): Promise<void> {
  heading('POST /v1/sms/send, 10,000 recipients')
  const { measured } = await measureOnFreshService(ctx, {
    label: 'POST /v1/sms/send 10k',
    name: 'service-send',
    env: { SVC_SMS_DISPATCHER: 'off' },
    staff: 4,
    load: async (service, tenant) => {
      const [session] = await loginStaff(service.url, tenant, 1)
      const body = await bodyFile(sendBody(RECIPIENTS))
      return () => oneAtATime(service.url, session!.access, body)
    },
  })
  ctx.addRow({
    ...measuredRow('POST /v1/sms/send, 10,000 recipients (1 connection)', measured),
    target: 'median < 1,000 ms',
    met: measured.p50 < 1000 && measured.failures === 0,
    notes: `${(measured.rps * RECIPIENTS).toLocaleString('en', { maximumFractionDigits: 0 })} recipients/s accepted; ${measured.cpu}`,
  })
}

if (isMain(import.meta.url)) await runStandalone(send10k)
