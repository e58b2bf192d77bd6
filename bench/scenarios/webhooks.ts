/**
 * Delivery events (webhooks, lib/events/deliverer.ts) on one service instance with production settings
 * (SVC_SMS_DISPATCHER=on, which runs the delivery loop; SVC_WEBHOOK_ALLOW_PRIVATE=true, as the receiver is on
 * loopback; concurrency, time limit and scheduler at their defaults).
 *
 * A tenant has at most SVC_WEBHOOK_TENANT_CONCURRENCY deliveries at once, so work meant to fill every worker is
 * spread over as many tenants as that takes (TENANTS).
 *
 * 1. Throughput: the tenants' endpoints, created through PUT /v1/webhook-endpoint (so their secrets are sealed as in
 *    production), point at a loopback receiver in a process of its own that answers 204 at once. 10,000 staff
 *    messages of the tenants are inserted as handed to the provider and moved to SENT in one statement, so the
 *    trigger writes 10,000 sms.message.completed events; events/s from the first claim seen to the last event
 *    recorded delivered (polled in the database), the receiver having counted 10,000 requests with 10,000 distinct
 *    webhook-ids and a sample verified with the Standard Webhooks library. Target: >= 500 events/s. Then, for
 *    context, one tenant's events alone: what its limit of deliveries at once leaves it.
 * 2. A slow receiver does not slow SMS dispatch: dispatch runs (bench/lib/dispatch-run.ts) on the same instance
 *    with and without deliveries under way, in turns. "With": a backlog of events for endpoints whose receiver
 *    answers after 2 s, the deliverer busy with all its workers (each held 2 s) from before the run to its end;
 *    "without": no event to deliver. The events belong to tenants of their own; the dispatched messages end
 *    DISPATCHED, which writes no event. Target: with >= 0.95 x without.
 * 3. Fairness: one tenant has 1,000 events queued for a receiver that accepts and never answers (each attempt ends
 *    at the time limit, 5 s); another tenant cancels a scheduled message through the API, whose
 *    sms.message.cancelled event goes to a receiver that answers at once. The time from the event written to it
 *    recorded delivered (both in the database's clock), once per run, spread over the hung attempts' cycle.
 *    Target: every run within 2 s.
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
const defaults = loadEnv({})
/** The deliverer's workers at the service's default (SVC_WEBHOOK_CONCURRENCY). */
const WORKERS = defaults.SVC_WEBHOOK_CONCURRENCY
/** One tenant's deliveries at once (SVC_WEBHOOK_TENANT_CONCURRENCY), and so the tenants it takes to fill the workers. */
const TENANT_LIMIT = defaults.SVC_WEBHOOK_TENANT_CONCURRENCY
const TENANTS = Math.ceil(WORKERS / TENANT_LIMIT)
/** Events of the one tenant delivered alone (context). */
const ONE_TENANT_EVENTS = 2000
/** The hanging receiver's queue, and the runs measuring another tenant's event beside it (after one warm-up). */
const FAIRNESS_BACKLOG = 1000
const FAIRNESS_RUNS = 6
const TARGET_FAIRNESS_MS = 2000
/** Between fairness runs: not a divisor of the time limit, so the runs fall at different points of the hung cycle. */
const FAIRNESS_SPACING_MS = 1300
/** The receiver's delay that means: accept the request and never answer. */
const HANG = -1
const RECEIVER_FLAG = '--receiver'

const instanceEnv = { SVC_SMS_DISPATCHER: 'on', SVC_WEBHOOK_ALLOW_PRIVATE: 'true' }

interface ReceiverStats {
  received: number
  /** Distinct webhook-id headers among them. */
  distinct: number
  /** The latest request, to verify its signature. */
  sample: { headers: Record<string, string>; body: string } | null
}

/**
 * The receiver process (this file run with --receiver <delay ms>): answers 204 after the delay (never with HANG),
 * counts, and reports on GET /stats.
 */
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
      if (delayMs === HANG) return
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

interface TenantWithEndpoint {
  tenant: SeededTenant
  secret: string
  /** The owner's access token. */
  access: string
}

/** A tenant with an endpoint created through the API (its secret sealed by the instance). */
async function tenantWithEndpoint(
  service: RunningProcess,
  owner: Kysely<DB>,
  receiver: Receiver,
  events = ['sms.message.completed'],
): Promise<TenantWithEndpoint> {
  const tenant = await seedTenant(service.url, owner, 0)
  const session = await login(service.url, tenant.customId, tenant.ownerLoginId)
  const response = await fetch(`${service.url}/v1/webhook-endpoint`, {
    method: 'PUT',
    headers: { ...bearer(session.access), 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/events`, events }),
  })
  if (response.status !== 200) throw new Error(`PUT /v1/webhook-endpoint: ${response.status} ${await response.text()}`)
  const { secret } = (await response.json()) as { secret: string }
  return { tenant, secret, access: session.access }
}

/**
 * `count` staff messages, shared out among `tenants`, moved to SENT in one statement, as delivery reports move them:
 * the trigger writes one sms.message.completed event each. Inserted as handed to the provider and not due, so no
 * dispatcher touches them. As the owner, whose writes pass row-level security through the owner_maintenance policy,
 * the trigger's insert too.
 */
async function completeMessages(owner: Kysely<DB>, tenants: SeededTenant[], count: number): Promise<void> {
  for (const [index, tenant] of tenants.entries()) {
    const share = Math.floor(count / tenants.length) + (index < count % tenants.length ? 1 : 0)
    await sql`
      insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
        estimated_segments, unit_price, total_price, status, provider, next_attempt_at, dispatched_at, updated_at)
      select ${tenant.tenantId}, ${tenant.ownerId}, 'CUSTOM', 1, 'Notice ' || g, 'Hello {name}', 'SMS', 1, 20, 20,
        'DISPATCHED', 'extsms', now() + interval '365 days', now(), now()
      from generate_series(1, ${share}) g`.execute(owner)
  }
  const ids = tenants.map((tenant) => tenant.tenantId)
  await sql`
    update sms_messages set status = 'SENT', success_count = 1, sent_at = now(), updated_at = now()
    where tenant_id = any(${ids}::bigint[]) and status = 'DISPATCHED'`.execute(owner)
}

async function eventCounts(owner: Kysely<DB>, tenants: SeededTenant[], after: number) {
  const tenantIds = tenants.map((tenant) => tenant.tenantId)
  const { rows } = await sql<{ started: number; undelivered: number; inFlight: number; delivered: number }>`
    select count(*) filter (where claim_token is not null or delivered_at is not null)::int as started,
           count(*) filter (where delivered_at is null)::int as undelivered,
           count(*) filter (where claim_token is not null)::int as "inFlight",
           count(*) filter (where delivered_at is not null)::int as delivered
    from webhook_events where tenant_id = any(${tenantIds}::bigint[]) and id > ${after}`.execute(owner)
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
  endpoints: TenantWithEndpoint[]
}

/** `events` events of the endpoints' tenants written at once, timed from the first claim seen to the last recorded delivered. */
async function deliverOnce(setup: Throughput, events: number): Promise<DeliveryRun> {
  const { database, service, receiver } = setup
  const tenants = setup.endpoints.map((endpoint) => endpoint.tenant)
  const after = await lastEventId(database.owner)
  const before = await receiver.stats()
  await quiet()
  await completeMessages(database.owner, tenants, events)
  const watch = { service: service.pid, receiver: receiver.child.pid! }
  const deadline = Date.now() + RUN_TIMEOUT_MS
  let startedAt: number | null = null
  let cpuFrom = null
  for (;;) {
    const counts = await eventCounts(database.owner, tenants, after)
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
      // Throws unless the receiver's copy carries a valid signature under its endpoint's secret (one of the tenants').
      const verifies = (secret: string) => {
        try {
          new Webhook(secret).verify(stats.sample!.body, stats.sample!.headers)
          return true
        } catch {
          return false
        }
      }
      if (!setup.endpoints.some((endpoint) => verifies(endpoint.secret))) throw new Error('the sampled event carries no valid signature')
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

/** Tenants enough to keep every worker busy, each with an endpoint at `receiver`. */
async function endpointsFillingWorkers(service: RunningProcess, owner: Kysely<DB>, receiver: Receiver): Promise<TenantWithEndpoint[]> {
  const endpoints: TenantWithEndpoint[] = []
  for (let i = 0; i < TENANTS; i++) endpoints.push(await tenantWithEndpoint(service, owner, receiver))
  return endpoints
}

async function throughput(ctx: BenchContext): Promise<void> {
  const database = await ctx.database()
  const receiver = await startReceiver(0)
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-webhooks', env: instanceEnv })
  try {
    const setup = { database, service, receiver, endpoints: await endpointsFillingWorkers(service, database.owner, receiver) }
    const label = `webhooks, ${EVENTS.toLocaleString('en')} events`
    const warm = await deliverOnce(setup, EVENTS / 4)
    log(`  ${label}: warm-up ${warm.eventsPerSecond.toFixed(0)} events/s (${EVENTS / 4} in ${warm.seconds.toFixed(2)} s)`)
    const runs: DeliveryRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) runs.push(await measuredDeliveryRun(`${label}: run ${i + 1}/${benchConfig.runs}`, setup))
    noteProblems(ctx, label, service)
    const rate = median(runs.map((run) => run.eventsPerSecond))
    const middle = [...runs].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)[Math.floor((runs.length - 1) / 2)]!
    ctx.addRow({
      scenario: `webhooks: ${EVENTS.toLocaleString('en')} completed messages of ${TENANTS} tenants delivered to a loopback receiver (1 instance)`,
      value: rate,
      unit: 'events/s',
      target: `>= ${TARGET_EVENTS_PER_SECOND} events/s`,
      met: rate >= TARGET_EVENTS_PER_SECOND,
      notes: `${WORKERS} workers, ${TENANT_LIMIT} per tenant at once; each run ${EVENTS.toLocaleString('en')} requests with distinct webhook-ids, a verified signature; ${middle.cpu}`,
    })
    const alone = await deliverOnce({ ...setup, endpoints: setup.endpoints.slice(0, 1) }, ONE_TENANT_EVENTS)
    log(`  webhooks, one tenant alone: ${alone.eventsPerSecond.toFixed(0)} events/s (${ONE_TENANT_EVENTS} in ${alone.seconds.toFixed(2)} s)`)
    ctx.addRow({
      scenario: `webhooks: ${ONE_TENANT_EVENTS.toLocaleString('en')} completed messages of one tenant alone (its ${TENANT_LIMIT} deliveries at once)`,
      value: alone.eventsPerSecond,
      unit: 'events/s',
      target: '(context)',
      met: null,
      notes: `one run; the price of SVC_WEBHOOK_TENANT_CONCURRENCY for a tenant with the workers to itself; ${alone.cpu}`,
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
  tenants: SeededTenant[],
  run: () => Promise<DispatchRun>,
  seen: SlowDeliveries,
): Promise<DispatchRun> {
  const after = await lastEventId(database.owner)
  await completeMessages(database.owner, tenants, BACKLOG)
  // The next scheduler tick claims them (every 5 s).
  await until(`${WORKERS} webhook deliveries in flight`, async () => (await eventCounts(database.owner, tenants, after)).inFlight >= WORKERS, 30_000)
  const started = performance.now()
  const result = await run()
  const counts = await eventCounts(database.owner, tenants, after)
  seen.delivered += counts.delivered
  seen.seconds += (performance.now() - started) / 1000
  seen.inFlightAtEnd.push(counts.inFlight)
  const tenantIds = tenants.map((tenant) => tenant.tenantId)
  await sql`
    delete from webhook_events
    where tenant_id = any(${tenantIds}::bigint[]) and delivered_at is null and claim_token is null`.execute(database.owner)
  await until('the deliveries in flight to end', async () => (await eventCounts(database.owner, tenants, after)).inFlight === 0, 30_000)
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
    const tenants = (await endpointsFillingWorkers(service, database.owner, receiver)).map((endpoint) => endpoint.tenant)
    const messages = benchConfig.dispatchMessages
    const once = (count: number) => () => dispatchOnce(database, [service], fake.child, count)
    const seen: SlowDeliveries = { delivered: 0, seconds: 0, inFlightAtEnd: [] }
    const warmSeen: SlowDeliveries = { delivered: 0, seconds: 0, inFlightAtEnd: [] }
    const warmCount = Math.max(10, Math.round(messages / 4))
    const label = 'dispatch, 1 instance'
    const warmWithout = await once(warmCount)()
    const warmWith = await dispatchDuringDeliveries(database, tenants, once(warmCount), warmSeen)
    log(`  ${label}: warm-up without ${warmWithout.recipientsPerSecond.toFixed(0)}, with ${warmWith.recipientsPerSecond.toFixed(0)} recipients/s`)
    const without: DispatchRun[] = []
    const withSlow: DispatchRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) {
      const name = `run ${i + 1}/${benchConfig.runs}`
      without.push(await measuredDispatchRun(`${label}, no webhook deliveries: ${name}`, once(messages)))
      withSlow.push(
        await measuredDispatchRun(`${label}, deliveries to a ${SLOW_RECEIVER_MS} ms receiver: ${name}`, () =>
          dispatchDuringDeliveries(database, tenants, once(messages), seen),
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

/** A staff message of the tenant scheduled a day ahead, which its owner may cancel; inserted as the owner. */
async function scheduledMessage(owner: Kysely<DB>, tenant: SeededTenant): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
      estimated_segments, unit_price, total_price, status, provider, scheduled_at, next_attempt_at, updated_at)
    values (${tenant.tenantId}, ${tenant.ownerId}, 'CUSTOM', 1, 'Later', 'Hello {name}', 'SMS', 1, 20, 20,
      'PENDING', 'extsms', now() + interval '1 day', now() + interval '1 day', now())
    returning id`.execute(owner)
  // Message ids run to 16 digits (a month's range starts at yyyymm x 10^10): a bigint, within a double's exact range.
  return Number(rows[0]!.id)
}

/** One fairness run: the other tenant's cancel through the API, then ms from its event written to recorded delivered. */
async function otherTenantsEvent(service: RunningProcess, owner: Kysely<DB>, other: TenantWithEndpoint): Promise<number> {
  const after = await lastEventId(owner)
  const smsId = await scheduledMessage(owner, other.tenant)
  const response = await fetch(`${service.url}/v1/sms/history/${smsId}/cancel`, { method: 'POST', headers: bearer(other.access) })
  if (response.status !== 200) throw new Error(`POST /v1/sms/history/${smsId}/cancel: ${response.status} ${await response.text()}`)
  let latency: number | null = null
  await until(
    `the other tenant's event for message ${smsId} delivered`,
    async () => {
      const { rows } = await sql<{ ms: number | null }>`
        select (extract(epoch from delivered_at - created_at) * 1000)::float8 as ms
        from webhook_events where tenant_id = ${other.tenant.tenantId} and id > ${after}`.execute(owner)
      latency = rows[0]?.ms ?? null
      return latency !== null
    },
    30_000,
  )
  return latency!
}

async function fairness(ctx: BenchContext): Promise<void> {
  const database = await ctx.database()
  const hanging = await startReceiver(HANG)
  const prompt = await startReceiver(0)
  const service = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-webhook-fairness', env: instanceEnv })
  try {
    const busy = await tenantWithEndpoint(service, database.owner, hanging)
    const other = await tenantWithEndpoint(service, database.owner, prompt, ['sms.message.cancelled'])
    const after = await lastEventId(database.owner)
    await completeMessages(database.owner, [busy.tenant], FAIRNESS_BACKLOG)
    // The next scheduler tick claims the backlog's first (every 5 s); from then on its hung attempts end every 5 s.
    await until('the backlog in flight', async () => (await eventCounts(database.owner, [busy.tenant], after)).inFlight >= TENANT_LIMIT, 30_000)
    const latencies: number[] = []
    const busyInFlight: number[] = []
    let busyUndelivered = FAIRNESS_BACKLOG
    for (let run = 0; run <= FAIRNESS_RUNS; run++) {
      await new Promise((resolve) => setTimeout(resolve, FAIRNESS_SPACING_MS))
      const ms = await otherTenantsEvent(service, database.owner, other)
      const counts = await eventCounts(database.owner, [busy.tenant], after)
      log(`  fairness ${run === 0 ? 'warm-up' : `run ${run}/${FAIRNESS_RUNS}`}: delivered in ${ms.toFixed(1)} ms; the backlog ${counts.undelivered} undelivered, ${counts.inFlight} claimed`)
      if (run === 0) continue
      latencies.push(ms)
      busyInFlight.push(counts.inFlight)
      busyUndelivered = Math.min(busyUndelivered, counts.undelivered)
    }
    noteProblems(ctx, 'webhook fairness', service)
    const slowest = Math.max(...latencies)
    ctx.addRow({
      scenario: `webhooks: another tenant's first event delivered while one tenant has ${FAIRNESS_BACKLOG.toLocaleString('en')} events queued for a hanging receiver (1 instance)`,
      value: median(latencies),
      unit: 'ms',
      target: `every run <= ${TARGET_FAIRNESS_MS.toLocaleString('en')} ms`,
      met: slowest <= TARGET_FAIRNESS_MS,
      notes:
        `from the event written (the cancel's commit) to recorded delivered, database clock; runs ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms, ` +
        `slowest ${slowest.toFixed(0)} ms; the hanging tenant's claims at each run ${busyInFlight.join(', ')} (limit ${TENANT_LIMIT}), ` +
        `at least ${busyUndelivered} of its events still queued; ${WORKERS} workers, time limit ${defaults.SVC_WEBHOOK_TIMEOUT_MS} ms`,
    })
  } finally {
    await service.stop()
    await stopChild(hanging.child)
    await stopChild(prompt.child)
  }
}

export async function webhooks(ctx: BenchContext): Promise<void> {
  heading('webhooks: delivery events to a loopback receiver')
  await throughput(ctx)
  heading('webhooks: SMS dispatch while a receiver answers in 2 s')
  await dispatchWithSlowReceiver(ctx)
  heading("webhooks: another tenant's event while one tenant's receiver hangs")
  await fairness(ctx)
}

if (isMain(import.meta.url)) {
  if (process.argv[2] === RECEIVER_FLAG) serveReceiver(Number(process.argv[3] ?? 0))
  else await runStandalone(webhooks)
}
