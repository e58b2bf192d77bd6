/**
 * One dispatch run into the loopback fake provider (bench/lib/fake-provider.ts): due messages inserted as a committed
 * send leaves them, claimed and sent by the running instances, recipients/s measured from the first claim seen to
 * the last message DISPATCHED, by polling the database. Shared by the dispatch scenario and the commit comparison.
 */
import type { ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { sql } from 'kysely'
import { insertTenantAndSender } from '../../test/support/dispatch-fixtures.js'
import { spawnTracked } from './cleanup.js'
import { benchConfig } from './config.js'
import { cpuSnapshot, cpuUse, describeCpu } from './cpu.js'
import type { BenchDatabase } from './database.js'
import { log, noiseIn, NOISY_RUN_RETRIES, quiet } from './load.js'
import { insertDueMessages } from './seed.js'
import { profileOptions, REPO_ROOT, TSX_IMPORT, type RunningProcess } from './service.js'

const API_KEY = 'BENCHKEY0000000000'
const API_SECRET = 'bench-secret-0123456789abcdef0123456789'
const POLL_MS = 20
const RUN_TIMEOUT_MS = 180_000

/** An instance that dispatches through the fake at `fakeUrl` (production batch size and cron). */
export function dispatcherEnv(fakeUrl: string): Record<string, string> {
  return {
    SVC_SMS_DISPATCHER: 'on',
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: API_KEY,
    SVC_SMS_EXTSMS_API_SECRET: API_SECRET,
    SVC_SMS_EXTSMS_BASE_URL: fakeUrl,
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'bench-webhook-token',
  }
}

/** The working tree's fake provider; a comparison runs each commit's own (refProviderFake). */
export const FAKE_PROVIDER_SCRIPT = join(REPO_ROOT, 'bench', 'lib', 'fake-provider.ts')

/**
 * Messages per dispatch run against a provider answering in `latencyMs`: BENCH_DISPATCH_MESSAGES on loopback; with a
 * latency, 40,000 recipients (a run of seconds to tens of seconds at four attempts in flight per instance).
 */
export function dispatchMessagesAt(latencyMs: number): number {
  return latencyMs === 0 ? benchConfig.dispatchMessages : Math.max(40, Math.round(40_000 / benchConfig.dispatchRecipients))
}

export async function startFake(latencyMs: number, script = FAKE_PROVIDER_SCRIPT): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnTracked(process.execPath, [...(await profileOptions('fake-provider')), '--import', TSX_IMPORT, script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', FAKE_API_KEY: API_KEY, FAKE_API_SECRET: API_SECRET, FAKE_LATENCY_MS: String(latencyMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'))
      if (line) resolve((JSON.parse(line) as { url: string }).url)
    })
    child.once('exit', (code) => reject(new Error(`fake provider exited (${code})`)))
  })
  return { url, child }
}

export interface DispatchRun {
  recipientsPerSecond: number
  seconds: number
  recipients: number
  cpu: string
  /** Busy time of the whole machine during the run, % of one core, out of `cores` x 100. */
  machine: number
  cores: number
  /** Why the run does not describe this machine alone (other processes, hypervisor steal), or null. */
  noise: string | null
}

export async function dispatchOnce(
  database: BenchDatabase,
  instances: RunningProcess[],
  fake: ChildProcess,
  messages: number,
  channel: 'SMS' | 'ALIMTALK' = 'SMS',
): Promise<DispatchRun> {
  const tenant = await insertTenantAndSender(database.owner)
  await quiet()
  await insertDueMessages(database.owner, tenant, messages, benchConfig.dispatchRecipients, channel)
  const recipients = messages * benchConfig.dispatchRecipients
  const watch: Record<string, number> = { fake: fake.pid! }
  instances.forEach((instance, i) => (watch[`instance ${i + 1}`] = instance.pid))

  const deadline = Date.now() + RUN_TIMEOUT_MS
  let startedAt: number | null = null
  let cpuFrom = null
  for (;;) {
    const { rows } = await sql<{ started: number; pending: number }>`
      select count(*) filter (where claim_token is not null or status <> 'PENDING')::int as started,
             count(*) filter (where status = 'PENDING')::int as pending
      from sms_messages where tenant_id = ${tenant.tenantId}`.execute(database.owner)
    const now = performance.now()
    if (startedAt === null && rows[0]!.started > 0) {
      startedAt = now
      cpuFrom = await cpuSnapshot(watch)
    }
    if (startedAt !== null && rows[0]!.pending === 0) {
      const seconds = (now - startedAt) / 1000
      const use = cpuUse(cpuFrom!, await cpuSnapshot(watch))
      const { rows: states } = await sql<{ deliveryStatus: string; n: number }>`
        select delivery_status, count(*)::int as n from sms_recipients where tenant_id = ${tenant.tenantId} group by 1`.execute(database.owner)
      const dispatched = states.find((state) => state.deliveryStatus === 'DISPATCHED')?.n ?? 0
      if (dispatched !== recipients) throw new Error(`expected ${recipients} DISPATCHED recipients, found ${JSON.stringify(states)}`)
      return {
        recipientsPerSecond: recipients / seconds,
        seconds,
        recipients,
        cpu: describeCpu(use),
        machine: use.machine,
        cores: use.cores,
        noise: noiseIn(use),
      }
    }
    if (Date.now() > deadline) throw new Error(`dispatch did not finish within ${RUN_TIMEOUT_MS / 1000} s: ${JSON.stringify(rows[0])}`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** One measured dispatch run, logged as `label`; a run disturbed by other processes is repeated, at most twice. */
export async function measuredDispatchRun(label: string, once: () => Promise<DispatchRun>): Promise<DispatchRun> {
  for (let attempt = 1; ; attempt++) {
    const run = await once()
    log(`  ${label} ${run.recipientsPerSecond.toFixed(0)} recipients/s (${run.recipients} in ${run.seconds.toFixed(2)} s)\n      ${run.cpu}`)
    if (!run.noise || attempt > NOISY_RUN_RETRIES) return run
    log(`  ${label}: ${run.noise}; repeating it`)
  }
}
