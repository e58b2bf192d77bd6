/**
 * POST /v1/sms/send with 10,000 recipients as KakaoTalk notices (channel ALIMTALK, the mock provider's
 * `mock-attendance` template with a request-wide and per-recipient variables) against the same send as SMS, one
 * request at a time, in turns on one API-only instance (SVC_SMS_DISPATCHER=off): what AlimTalk adds to acceptance
 * (the template's read, every recipient's variables checked and rendered to size the fallback).
 * Target: the AlimTalk send's median within 1.2 x the SMS send's.
 */
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { bodyFile, measure, type Measurement } from '../lib/load.js'
import { heading } from '../lib/scenario-helpers.js'
import { login } from '../lib/seed.js'
import { withSeededService } from '../lib/service-scenario.js'
import { oneAtATime, RECIPIENTS, sendBody } from './send-10k.js'

const MOCK_CHANNEL = 'mock-channel'
const MOCK_TEMPLATE = 'mock-attendance'

/** The same recipients as the SMS body, sent as the mock's attendance notice. */
export function alimtalkBody(recipients: number, kakaoTemplateId: number): string {
  const sms = JSON.parse(sendBody(recipients)) as { recipients: Array<Record<string, string>> }
  return JSON.stringify({
    title: 'Bench',
    channel: 'ALIMTALK',
    kakaoTemplateId,
    variables: { time: '16:02' },
    recipients: sms.recipients,
  })
}

async function call(url: string, access: string, method: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export async function alimtalkSend(ctx: BenchContext): Promise<void> {
  heading('POST /v1/sms/send, 10,000 recipients: AlimTalk against SMS, in turns')
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-alimtalk-send', env: { SVC_SMS_DISPATCHER: 'off' }, staff: 1 }
  const { result } = await withSeededService(ctx, options, async (service, tenant) => {
    const owner = await login(service.url, tenant.customId, tenant.ownerLoginId)
    await call(`${service.url}/v1/kakao/channel`, owner.access, 'PUT', { pfId: MOCK_CHANNEL })
    const template = await call(`${service.url}/v1/kakao/templates`, owner.access, 'POST', { providerTemplateId: MOCK_TEMPLATE })
    const bodies = {
      sms: await bodyFile(sendBody(RECIPIENTS)),
      alimtalk: await bodyFile(alimtalkBody(RECIPIENTS, template.id as number)),
    }
    const runs: Record<keyof typeof bodies, Measurement[]> = { sms: [], alimtalk: [] }
    for (let run = 0; run < benchConfig.runs; run++) {
      for (const kind of ['sms', 'alimtalk'] as const) {
        runs[kind].push(
          await measure({ label: `${kind} send 10k: run ${run + 1}/${benchConfig.runs}`, watch: { service: service.pid }, spec: () => oneAtATime(service.url, owner.access, bodies[kind]) }),
        )
      }
    }
    return runs
  })
  const failures = [...result.sms, ...result.alimtalk].reduce((sum, run) => sum + run.failures, 0)
  const sms = median(result.sms.map((run) => run.p50))
  const alimtalk = median(result.alimtalk.map((run) => run.p50))
  const ratio = alimtalk / sms
  ctx.addRow({
    scenario: 'POST /v1/sms/send, 10,000 recipients as AlimTalk (1 connection)',
    value: median(result.alimtalk.map((run) => run.rps)),
    unit: 'req/s',
    p50: alimtalk,
    baseline: 'the same send as SMS, in turns',
    baselineValue: median(result.sms.map((run) => run.rps)),
    ratio,
    target: 'median <= 1.2 x the SMS send',
    met: ratio <= 1.2 && failures === 0,
    notes: `medians ${alimtalk.toFixed(0)} ms (AlimTalk) / ${sms.toFixed(0)} ms (SMS); runs ${result.alimtalk.map((run) => run.p50.toFixed(0)).join(', ')} / ${result.sms.map((run) => run.p50.toFixed(0)).join(', ')} ms${failures ? `; ${failures} failed answers` : ''}`,
  })
}

if (isMain(import.meta.url)) await runStandalone(alimtalkSend)
