/**
 * The hot path at scale: a database of 13 past months, BENCH_SCALE_MESSAGES (1,000,000) messages with
 * BENCH_SCALE_RECIPIENTS (10) recipients each on average over BENCH_SCALE_ACADEMIES (2,000) academies, one academy
 * holding a tenth of the messages (bench/lib/scale-fill.ts). On it: the history page and message detail of that
 * academy, a dispatch run, the 10,000-recipient send, then one month removed as partitions and its twin month
 * deleted row by row (bench/lib/month-removal.ts).
 * Targets: history p50 < 20 ms, detail p50 < 10 ms, send median < 1 s, dispatch >= 2,000 recipients/s; the two
 * removals are compared with each other.
 */
import { sql } from 'kysely'
import { stopChild } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import type { BenchDatabase } from '../lib/database.js'
import { dispatcherEnv, dispatchOnce, measuredDispatchRun, startFake, type DispatchRun } from '../lib/dispatch-run.js'
import { bodyFile, log, measure, median } from '../lib/load.js'
import { deleteMonth, dropLegacyRange, dropMonth, type RemovalFigures } from '../lib/month-removal.js'
import { countMismatches, fillScale, PAST_MONTHS, type ScaleFill } from '../lib/scale-fill.js'
import { bearer, checkRun, heading, measuredRow } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant, type SeededTenant } from '../lib/seed.js'
import { loggedProblems, startService, summariseProblems } from '../lib/service.js'
import { HISTORY_PATH } from './history.js'
import { oneAtATime, RECIPIENTS, sendBody } from './send-10k.js'

/** The maintenance job would purge and drop the filled months (default retention 400 days): the scenario does it. */
const KEEP_EVERYTHING = { SVC_SMS_RETENTION_DAYS: '0' }
const DETAIL_IDS_PER_MONTH = 20
// A send of 10,000 recipients takes most of a second: a shorter warm-up may end before any answer.
const SEND_WARMUP_SECONDS = Math.max(benchConfig.warmup, 5)

/** The JavaScript twin of svc_sms_range_start: yyyymm x 10^10 (below 2^53, exact as a number). */
function rangeStart(month: string): number {
  return (Number(month.slice(0, 4)) * 100 + Number(month.slice(5, 7))) * 1e10
}

/** Ids of the large academy's messages, DETAIL_IDS_PER_MONTH evenly through each past month. */
function detailIds(fill: ScaleFill): number[] {
  return fill.months.flatMap((month) =>
    Array.from({ length: DETAIL_IDS_PER_MONTH }, (_, j) => rangeStart(month) + 1 + Math.floor((j * fill.largePerMonth) / DETAIL_IDS_PER_MONTH)),
  )
}

/** Plans of the statements behind the figures, as the owner sees them, in the log (evidence for a missed target). */
async function logPlans(database: BenchDatabase, tenantId: number, id: number): Promise<void> {
  for (const statement of [
    `select id from sms_messages where tenant_id = ${tenantId} and kind = 'STAFF' order by created_at desc, id desc limit 20`,
    `select * from sms_messages where tenant_id = ${tenantId} and id = ${id}`,
    `select * from sms_recipients where tenant_id = ${tenantId} and sms_id = ${id} order by recipient_index`,
  ]) {
    const { rows } = await database.ownerPool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement}`)
    log(`  plan of ${statement}:\n${rows.map((row) => `    ${row['QUERY PLAN']}`).join('\n')}`)
  }
}

/** One dispatching instance on the filled database: a warm-up, then benchConfig.runs measured runs. */
async function measureDispatch(ctx: BenchContext, database: BenchDatabase): Promise<{ rate: number; middle: DispatchRun }> {
  const fake = await startFake(0)
  const instance = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-scale-dispatch',
    env: { ...dispatcherEnv(fake.url), ...KEEP_EVERYTHING },
  })
  try {
    await dispatchOnce(database, [instance], fake.child, Math.max(10, Math.round(benchConfig.dispatchMessages / 4)))
    const runs: DispatchRun[] = []
    for (let i = 0; i < benchConfig.runs; i++) {
      runs.push(await measuredDispatchRun(`dispatch at scale: run ${i + 1}/${benchConfig.runs}`, () => dispatchOnce(database, [instance], fake.child, benchConfig.dispatchMessages)))
    }
    const problems = loggedProblems(instance)
    if (problems.length > 0) ctx.note(`dispatch at scale: ${summariseProblems(problems)}`)
    const sorted = [...runs].sort((a, b) => a.recipientsPerSecond - b.recipientsPerSecond)
    return { rate: median(runs.map((run) => run.recipientsPerSecond)), middle: sorted[Math.floor((sorted.length - 1) / 2)]! }
  } finally {
    await instance.stop()
    await stopChild(fake.child)
  }
}

function removalNotes(figures: RemovalFigures): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`
  return (
    `${figures.messages.toLocaleString('en')} messages; WAL ${mb(figures.walBytes)} (server-wide, the writer's and other databases' included: ` +
    `${mb(figures.walBytesPerSecondBefore)}/s before it); writer (send + history read, one after the other): p50 ${figures.writerP50Before.toFixed(1)} ms before, ` +
    `${figures.writerP50During.toFixed(1)} ms during, longest ${figures.writerMaxDuring.toFixed(0)} ms over ${figures.writerRequests} requests` +
    `${figures.writerFailures ? `, ${figures.writerFailures} failed` : ''}; longest lock wait sampled every 50 ms: ${figures.longestLockWaitMs.toFixed(0)} ms (${figures.lockWaitOn})`
  )
}

async function fillDatabase(ctx: BenchContext, database: BenchDatabase, large: SeededTenant): Promise<ScaleFill> {
  const fill = await fillScale(database.owner, large)
  const { rows } = await sql<{ bytes: string }>`select pg_database_size(current_database()) as bytes`.execute(database.owner)
  const mismatches = await countMismatches(database.owner)
  ctx.note(
    `scale fill: ${fill.messages.toLocaleString('en')} messages and ${fill.recipients.toLocaleString('en')} recipients over ${PAST_MONTHS} months ` +
      `(${fill.messagesPerMonth.toLocaleString('en')} a month, ${fill.largePerMonth.toLocaleString('en')} of them the large academy's) and ` +
      `${benchConfig.scaleAcademies.toLocaleString('en')} + 1 academies in ${fill.seconds.toFixed(0)} s, vacuum analyze included; ` +
      `database ${(Number(rows[0]!.bytes) / 2 ** 30).toFixed(2)} GiB; sms_message_counts rows differing from a count: ${mismatches}`,
  )
  return fill
}

export async function scale(ctx: BenchContext): Promise<void> {
  heading(`scale: ${benchConfig.scaleMessages.toLocaleString('en')} messages over ${PAST_MONTHS} months`)
  const database = await ctx.database()
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-scale',
    env: { SVC_SMS_DISPATCHER: 'off', ...KEEP_EVERYTHING },
  })
  try {
    const large = await seedTenant(service.url, database.owner, 4)
    const fill = await fillDatabase(ctx, database, large)
    const size = `${(fill.largePerMonth * PAST_MONTHS).toLocaleString('en')} of ${fill.messages.toLocaleString('en')} msgs`
    const sessions = await loginStaff(service.url, large, 4)
    const ids = detailIds(fill)
    await logPlans(database, large.tenantId, ids[Math.floor(ids.length / 2)]!)

    /** GET requests over `paths` in turn, each connection a staff member of the large academy. */
    const getting = (paths: string[]) => (connections: number) => () => ({
      url: service.url,
      method: 'GET' as const,
      path: paths[0]!,
      ...(paths.length > 1 && { paths }),
      connections,
      duration: benchConfig.duration,
      connectionHeaders: sessions.map((session) => bearer(session.access)),
    })
    const historySpec = getting([HISTORY_PATH])
    const loaded = await measure({ label: 'history at scale', watch: { service: service.pid }, spec: historySpec(benchConfig.connections) })
    const single = await measure({ label: 'history at scale, 1 connection', watch: { service: service.pid }, spec: historySpec(1) })
    checkRun(ctx, 'history at scale', service, loaded)
    ctx.addRow({ ...measuredRow(`GET /v1/sms/history at scale (page of 20, ${size})`, loaded), target: 'p50 < 20 ms', met: loaded.p50 < 20 && loaded.failures === 0, notes: loaded.cpu })
    ctx.addRow({ ...measuredRow(`GET /v1/sms/history at scale, 1 connection`, single), target: '(context: latency without queueing)', met: null })

    const detailSpec = getting(ids.map((id) => `/v1/sms/history/${id}`))
    const detail = await measure({ label: 'detail at scale', watch: { service: service.pid }, spec: detailSpec(benchConfig.connections) })
    const detailSingle = await measure({ label: 'detail at scale, 1 connection', watch: { service: service.pid }, spec: detailSpec(1) })
    checkRun(ctx, 'detail at scale', service, detail)
    const detailIdsNote = `${ids.length} ids, ${DETAIL_IDS_PER_MONTH} in each month, in turn`
    ctx.addRow({
      ...measuredRow(`GET /v1/sms/history/{id} at scale (${benchConfig.connections} connections)`, detail),
      target: 'p50 < 10 ms',
      met: detail.p50 < 10 && detail.failures === 0,
      notes: `${detailIdsNote}; ${detail.cpu}`,
    })
    ctx.addRow({ ...measuredRow('GET /v1/sms/history/{id} at scale, 1 connection', detailSingle), target: '(context)', met: null, notes: detailIdsNote })

    // Before the sends: a dispatching instance would take their PENDING messages into its figure.
    const dispatched = await measureDispatch(ctx, database)
    ctx.addRow({
      scenario: `dispatch at scale, 1 instance (${benchConfig.dispatchMessages} msgs x ${benchConfig.dispatchRecipients} recipients, provider 0 ms)`,
      value: dispatched.rate,
      unit: 'recipients/s',
      target: '>= 2,000 recipients/s',
      met: dispatched.rate >= 2000,
      notes: dispatched.middle.cpu,
    })

    const body = await bodyFile(sendBody(RECIPIENTS))
    const sent = await measure({ label: 'send 10k at scale', warmup: SEND_WARMUP_SECONDS, watch: { service: service.pid }, spec: () => oneAtATime(service.url, sessions[1]!.access, body) })
    checkRun(ctx, 'send 10k at scale', service, sent)
    ctx.addRow({
      ...measuredRow('POST /v1/sms/send at scale, 10,000 recipients (1 connection)', sent),
      target: 'median < 1,000 ms',
      met: sent.p50 < 1000 && sent.failures === 0,
      notes: sent.cpu,
    })

    await dropLegacyRange(database.owner)
    const writer = { url: service.url, access: sessions[0]!.access, historyPath: HISTORY_PATH }
    const dropped = await dropMonth(database.url, database.owner, writer, `p${fill.months[0]!.slice(0, 7).replace('-', '')}`)
    const deleted = await deleteMonth(database.url, writer, fill.months[1]!)
    ctx.addRow({ scenario: `remove a month: ${deleted.method}`, value: deleted.seconds, unit: 's', target: '(context)', met: null, notes: removalNotes(deleted) })
    ctx.addRow({
      scenario: `remove a month: ${dropped.method}`,
      value: dropped.seconds,
      unit: 's',
      baseline: 'DELETE',
      baselineValue: deleted.seconds,
      ratio: dropped.seconds / deleted.seconds,
      target: '(context: against DELETE)',
      met: null,
      notes: removalNotes(dropped),
    })
    ctx.note(`after both removals, sms_message_counts rows differing from a count: ${await countMismatches(database.owner)}`)
    checkRun(ctx, 'scale', service)
  } finally {
    await service.stop()
  }
}

if (isMain(import.meta.url)) await runStandalone(scale)
