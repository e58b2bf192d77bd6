/**
 * Delivery events (webhooks, lib/webhooks/deliverer.ts) on one service instance with production settings
 * (SVC_SMS_DISPATCHER=on, which runs the delivery loop; SVC_WEBHOOK_ALLOW_PRIVATE=true, as the receiver is on
 * loopback; concurrency, time limit and scheduler at their defaults).
 *
 * 1. Throughput: a tenant's endpoint, created through PUT /v1/webhook-endpoint (so its secret is sealed as in
 *    production), points at a loopback receiver in a process of its own that answers 204 at once. 10,000 staff
 *    messages are inserted as handed to the provider and moved to SENT in one statement, so the trigger writes
 *    10,000 sms.message.completed events; events/s from the first claim seen to the last event recorded delivered
 *    (polled in the database), the receiver having counted 10,000 requests with 10,000 distinct webhook-ids and a
 *    sample verified with the Standard Webhooks library. Target: >= 500 events/s.
 * 2. A slow receiver does not slow SMS dispatch: dispatch runs (bench/lib/dispatch-run.ts) on the same instance
 *    with and without deliveries under way, in turns. "With": a backlog of events for an endpoint whose receiver
 *    answers after 2 s, the deliverer busy with all its workers (each held 2 s) from before the run to its end;
 *    "without": no event to deliver. The deliverer claims across tenants, so the events belong to a tenant of their
 *    own; the dispatched messages end DISPATCHED, which writes no event. Target: with >= 0.95 x without.
 */
import { fileURLToPath } from 'node:url'
import { createServer } from 'node:http'
import type { ChildProcess } from 'node:child_process'
import { sql, type Kysely } from 'kysely'
import { Webhook } from 'standardwebhooks'
import type { DB } from '../../db/schema.js'
import { loadEnv } from '../../lib/env.js'
import { spawnTracked, stopChild } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { cpuSnapshot, cpuUse, describeCpu } from '../lib/cpu.js'
import type { BenchDatabase } from '../lib/database.js'
import { dispatcherEnv, dispatchOnce, measuredDispatchRun, startFake, type DispatchRun } from '../lib/dispatch-run.js'
import { log, median, noiseIn, NOISY_RUN_RETRIES, quiet } from '../lib/load.js'
import { bearer, heading } from '../lib/scenario-helpers.js'
import { login, seedTenant, type SeededTenant } from '../lib/seed.js'
import { HOST, loggedProblems, REPO_ROOT, startService, summariseProblems, TSX_IMPORT, type RunningProcess } from '../lib/service.js'

const EVENTS = 10_000
const TARGET_EVENTS_PER_SECOND = 500
const SLOW_RECEIVER_MS = 2000
const TARGET_DISPATCH_RATIO = 0.95
/** Events waiting before each run with the slow receiver: at 2 s per event and worker, enough for minutes. */
const BACKLOG = 2000
const POLL_MS = 50
const RUN_TIMEOUT_MS = 180_000
/** The deliverer's workers at the service's default (SVC_WEBHOOK_CONCURRENCY). */
const WORKERS = loadEnv({}).SVC_WEBHOOK_CONCURRENCY
const RECEIVER_FLAG = '--receiver'

const instanceEnv = { SVC_SMS_DISPATCHER: 'on', SVC_WEBHOOK_ALLOW_PRIVATE: 'true' }

interface ReceiverStats {
  received: number
  /** Distinct webhook-id headers among them. */
  distinct: number
  /** The latest request, to verify its signature. */
  sample: { headers: Record<string, string>; body: string } | null
}

/** The receiver process (this file run with --receiver <delay ms>): answers 204 after the delay, counts, and reports on GET /stats. */
function serveReceiver(delayMs: number): void {
  const ids = new Set<string>()
  const stats: ReceiverStats = { received: 0, distinct: 0, sample: null }
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/stats') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...stats, distinct: ids.size }))
      return
    }
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      stats.received += 1
      const header = (name: string) => String(request.headers[name] ?? '')
      ids.add(header('webhook-id'))
      stats.sample = {
        headers: { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') },
        body: Buffer.concat(chunks).toString('utf8'),
      }
      const answer = () => response.writeHead(204).end()
      if (delayMs > 0) setTimeout(answer, delayMs)
      else answer()
    })
  })
  // The deliverer keeps its connections alive between events.
  server.keepAliveTimeout = 60_000
  server.listen(0, HOST, () => {
    const address = server.address() as { port: number }
    console.log(JSON.stringify({ url: `http://${HOST}:${address.port}` }))
  })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.closeAllConnections()
      server.close(() => process.exit(0))
    })
  }
}

interface Receiver {
  url: string
  child: ChildProcess
  stats(): Promise<ReceiverStats>
}

async function startReceiver(delayMs: number): Promise<Receiver> {
  const child = spawnTracked(process.execPath, ['--import', TSX_IMPORT, fileURLToPath(import.meta.url), RECEIVER_FLAG, String(delayMs)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      const line = out.split('\n').find((candidate) => candidate.startsWith('{'))
      if (line) resolve((JSON.parse(line) as { url: string }).url)
    })
    child.once('exit', (code) => reject(new Error(`webhook receiver exited (${code})`)))
  })
  return {
    url,
    child,
    async stats() {
      const response = await fetch(`${url}/stats`)
      return (await response.json()) as ReceiverStats
    },
  }
}

/** A tenant with an endpoint created through the API (its secret sealed by the instance); returns the secret. */
async function tenantWithEndpoint(service: RunningProcess, owner: Kysely<DB>, receiver: Receiver): Promise<{ tenant: SeededTenant; secret: string }> {
  const tenant = await seedTenant(service.url, owner, 0)
  const session = await login(service.url, tenant.customId, tenant.ownerLoginId)
  const response = await fetch(`${service.url}/v1/webhook-endpoint`, {
    method: 'PUT',
    headers: { ...bearer(session.access), 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/events`, events: ['sms.message.completed'] }),
  })
  if (response.status !== 200) throw new Error(`PUT /v1/webhook-endpoint: ${response.status} ${await response.text()}`)
  const { secret } = (await response.json()) as { secret: string }
  return { tenant, secret }
}

/**
 * `count` staff messages moved to SENT in one statement, as delivery reports move them: the trigger writes one
 * sms.message.completed event each. Inserted as handed to the provider and not due, so no dispatcher touches them.
 * As the owner, whose writes pass row-level security through the owner_maintenance policy, the trigger's insert too.
 */
async function completeMessages(owner: Kysely<DB>, tenant: SeededTenant, count: number): Promise<void> {
  await sql`
    insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
      estimated_segments, unit_price, total_price, status, provider, next_attempt_at, dispatched_at, updated_at)
    select ${tenant.tenantId}, ${tenant.ownerId}, 'CUSTOM', 1, 'Notice ' || g, 'Hello {name}', 'SMS', 1, 20, 20,
      'DISPATCHED', 'extsms', now() + interval '365 days', now(), now()
    from generate_series(1, ${count}) g`.execute(owner)
  await sql`
    update sms_messages set status = 'SENT', success_count = 1, sent_at = now(), updated_at = now()
    where tenant_id = ${tenant.tenantId} and status = 'DISPATCHED'`.execute(owner)
}

async function eventCounts(owner: Kysely<DB>, tenantId: number, after: number) {
  const { rows } = await sql<{ started: number; undelivered: number; inFlight: number; delivered: number }>`
    select count(*) filter (where claim_token is not null or delivered_at is not null)::int as started,
           count(*) filter (where delivered_at is null)::int as undelivered,
           count(*) filter (where claim_token is not null)::int as "inFlight",
           count(*) filter (where delivered_at is not null)::int as delivered
    from webhook_events where tenant_id = ${tenantId} and id > ${after}`.execute(owner)
  return rows[0]!
}

async function lastEventId(owner: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ id: number }>`select coalesce(max(id), 0)::int as id from webhook_events`.execute(owner)
  return rows[0]!.id
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

interface DeliveryRun {
  eventsPerSecond: number
  seconds: number
  cpu: string
  noise: string | null
}

interface Throughput {
  database: BenchDatabase
  service: RunningProcess
  receiver: Receiver
  tenant: SeededTenant
  secret: string
}

/** `events` events written at once, timed from the first claim seen to the last recorded delivered. */
async function deliverOnce(setup: Throughput, events: number): Promise<DeliveryRun> {
  const { database, service, receiver, tenant } = setup
  const after = await lastEventId(database.owner)
  const before = await receiver.stats()
  await quiet()
  await completeMessages(database.owner, tenant, events)
  const watch = { service: service.pid, receiver: receiver.child.pid! }
  const deadline = Date.now() + RUN_TIMEOUT_MS
  let startedAt: number | null = null
  let cpuFrom = null
  for (;;) {
    const counts = await eventCounts(database.owner, tenant.tenantId, after)
    const now = performance.now()
    if (startedAt === null && counts.started > 0) {
      startedAt = now
      cpuFrom = await cpuSnapshot(watch)
    }
    if (startedAt !== null && counts.undelivered === 0) {
      const seconds = (now - startedAt) / 1000
      const use = cpuUse(cpuFrom!, await cpuSnapshot(watch))
      const stats = await receiver.stats()
      const received = stats.received - before.received
      const distinct = stats.distinct - before.distinct
      if (counts.delivered !== events || received !== events || distinct !== events) {
        throw new Error(`expected ${events} events delivered, received and distinct; got ${counts.delivered}, ${received}, ${distinct}`)
      }
      // Throws unless the receiver's copy carries a valid signature under the endpoint's secret.
      new Webhook(setup.secret).verify(stats.sample!.body, stats.sample!.headers)
      return { eventsPerSecond: events / seconds, seconds, cpu: describeCpu(use), noise: noiseIn(use) }
    }
    if (Date.now() > deadline) throw new Error(`delivery did not finish within ${RUN_TIMEOUT_MS / 1000} s: ${JSON.stringify(counts)}`)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

async function measuredDeliveryRun(label: string, setup: Throughput): Promise<DeliveryRun> {
  for (let attempt = 1; ; attempt++) {
    const run = await deliverOnce(setup, EVENTS)
    log(`  ${label} ${run.eventsPerSecond.toFixed(0)} events/s (${EVENTS} in ${run.seconds.toFixed(2)} s)\n      ${run.cpu}`)
    if (!run.noise || attempt > NOISY_RUN_RETRIES) return run
    log(`  ${label}: ${run.noise}; repeating it`)
  }
}

function noteProblems(ctx: BenchContext, label: string, service: RunningProcess): void {
  const problems = loggedProblems(service)
  if (problems.length > 0) ctx.note(`${label}: ${service.name} logged ${summariseProblems(problems)}`)
}

async function throughput(ctx: BenchContext): Promise<void> {
  const database = await ctx.database()
  const receiver = await startReceiver(0)
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-webhooks', env: instanceEnv })
  try {
    const setup = { database, service, receiver, ...(await tenantWithEndpoint(service, database.owner, receiver)) }
    const label = `webhooks, ${EVENTS.toLocaleString('en')} events`
    const warm = await deliverOnce(setup, EVENTS / 4)
    log(`  ${label}: warm-up ${warm.eventsPerSecond.toFixed(0)} events/s (${EVENTS / 4} in ${warm.seconds.toFixed(2)} s)`)
    const runs: DeliveryRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) runs.push(await measuredDeliveryRun(`${label}: run ${i + 1}/${benchConfig.runs}`, setup))
    noteProblems(ctx, label, service)
    const rate = median(runs.map((run) => run.eventsPerSecond))
    const middle = [...runs].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)[Math.floor((runs.length - 1) / 2)]!
    ctx.addRow({
      scenario: `webhooks: ${EVENTS.toLocaleString('en')} completed messages delivered to a loopback receiver (1 instance)`,
      value: rate,
      unit: 'events/s',
      target: `>= ${TARGET_EVENTS_PER_SECOND} events/s`,
      met: rate >= TARGET_EVENTS_PER_SECOND,
      notes: `${WORKERS} workers; each run ${EVENTS.toLocaleString('en')} requests with distinct webhook-ids, a verified signature; ${middle.cpu}`,
    })
  } finally {
    await service.stop()
    await stopChild(receiver.child)
  }
}

/** Webhook deliveries seen during the dispatch runs with the slow receiver. */
interface SlowDeliveries {
  delivered: number
  seconds: number
  /** Events still in flight when each run ended: the workers were busy to the end. */
  inFlightAtEnd: number[]
}

/**
 * One dispatch run while the deliverer works through a backlog for the slow receiver: the backlog is written, the
 * run starts once every worker holds an event, and after it the undelivered rest is removed and the deliveries in
 * flight end, so none reaches into the next run without.
 */
async function dispatchDuringDeliveries(
  database: BenchDatabase,
  tenant: SeededTenant,
  run: () => Promise<DispatchRun>,
  seen: SlowDeliveries,
): Promise<DispatchRun> {
  const after = await lastEventId(database.owner)
  await completeMessages(database.owner, tenant, BACKLOG)
  // The next scheduler tick claims them (every 5 s).
  await until(`${WORKERS} webhook deliveries in flight`, async () => (await eventCounts(database.owner, tenant.tenantId, after)).inFlight >= WORKERS, 30_000)
  const started = performance.now()
  const result = await run()
  const counts = await eventCounts(database.owner, tenant.tenantId, after)
  seen.delivered += counts.delivered
  seen.seconds += (performance.now() - started) / 1000
  seen.inFlightAtEnd.push(counts.inFlight)
  await sql`
    delete from webhook_events where tenant_id = ${tenant.tenantId} and delivered_at is null and claim_token is null`.execute(database.owner)
  await until('the deliveries in flight to end', async () => (await eventCounts(database.owner, tenant.tenantId, after)).inFlight === 0, 30_000)
  return result
}

async function dispatchWithSlowReceiver(ctx: BenchContext): Promise<void> {
  const database = await ctx.database()
  const fake = await startFake(0)
  const receiver = await startReceiver(SLOW_RECEIVER_MS)
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-dispatch-webhooks',
    env: { ...dispatcherEnv(fake.url), ...instanceEnv },
  })
  try {
    const { tenant } = await tenantWithEndpoint(service, database.owner, receiver)
    const messages = benchConfig.dispatchMessages
    const once = (count: number) => () => dispatchOnce(database, [service], fake.child, count)
    const seen: SlowDeliveries = { delivered: 0, seconds: 0, inFlightAtEnd: [] }
    const warmSeen: SlowDeliveries = { delivered: 0, seconds: 0, inFlightAtEnd: [] }
    const warmCount = Math.max(10, Math.round(messages / 4))
    const label = 'dispatch, 1 instance'
    const warmWithout = await once(warmCount)()
    const warmWith = await dispatchDuringDeliveries(database, tenant, once(warmCount), warmSeen)
    log(`  ${label}: warm-up without ${warmWithout.recipientsPerSecond.toFixed(0)}, with ${warmWith.recipientsPerSecond.toFixed(0)} recipients/s`)
    const without: DispatchRun[] = []
    const withSlow: DispatchRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) {
      const name = `run ${i + 1}/${benchConfig.runs}`
      without.push(await measuredDispatchRun(`${label}, no webhook deliveries: ${name}`, once(messages)))
      withSlow.push(
        await measuredDispatchRun(`${label}, deliveries to a ${SLOW_RECEIVER_MS} ms receiver: ${name}`, () =>
          dispatchDuringDeliveries(database, tenant, once(messages), seen),
        ),
      )
    }
    noteProblems(ctx, 'dispatch with webhook deliveries', service)
    const withoutRate = median(without.map((run) => run.recipientsPerSecond))
    const withRate = median(withSlow.map((run) => run.recipientsPerSecond))
    // Each run with deliveries against the run without that came just before it: the machine's drift over minutes
    // falls on both sides of a pair, not on the ratio of two medians.
    const pairs = withSlow.map((run, index) => run.recipientsPerSecond / without[index]!.recipientsPerSecond)
    const ratio = median(pairs)
    const cpuOf = (runs: DispatchRun[]) => [...runs].sort((a, b) => a.recipientsPerSecond - b.recipientsPerSecond)[Math.floor((runs.length - 1) / 2)]!.cpu
    const size = `${messages} msgs x ${benchConfig.dispatchRecipients} recipients`
    ctx.addRow({
      scenario: `dispatch, 1 instance, no webhook deliveries (${size})`,
      value: withoutRate,
      unit: 'recipients/s',
      target: '(context)',
      met: null,
      notes: cpuOf(without),
    })
    ctx.addRow({
      scenario: `dispatch, 1 instance, ${WORKERS} deliveries at a time to a receiver answering in ${SLOW_RECEIVER_MS / 1000} s (${size})`,
      value: withRate,
      unit: 'recipients/s',
      baseline: 'the same without deliveries, in turns (median of the pairs)',
      baselineValue: withoutRate,
      ratio,
      target: `>= ${TARGET_DISPATCH_RATIO} x without`,
      met: ratio >= TARGET_DISPATCH_RATIO,
      notes:
        `pairs ${pairs.map((pair) => pair.toFixed(2)).join(', ')}; ` +
        `${seen.delivered} events delivered during the runs with deliveries (${(seen.delivered / seen.seconds).toFixed(1)}/s), ` +
        `in flight at each run's end: ${seen.inFlightAtEnd.join(', ')}; ${cpuOf(withSlow)}`,
    })
  } finally {
    await service.stop()
    await stopChild(receiver.child)
    await stopChild(fake.child)
  }
}

export async function webhooks(ctx: BenchContext): Promise<void> {
  heading('webhooks: delivery events to a loopback receiver')
  await throughput(ctx)
  heading('webhooks: SMS dispatch while a receiver answers in 2 s')
  await dispatchWithSlowReceiver(ctx)
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === RECEIVER_FLAG) serveReceiver(Number(process.argv[3] ?? 0))
  else await runStandalone(webhooks)
}
