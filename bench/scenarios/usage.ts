/**
 * GET /v1/sms/usage for a whole year (365 local days), for a manager, on two tenants of one database: a quiet one
 * (a few messages a day, a few buckets a day) and a busy one (a message in every 15-minute bucket of the year,
 * 35,040 buckets: the most rows a year of usage can have). The messages go straight into sms_messages (their
 * triggers journal the usage) and are rolled up in the service's zone, as the minute job leaves them: a report
 * then reads one row per local day (sms_usage_days), whatever the number of buckets. Measured under the standard
 * load, then one request at a time for p50 and p95 without queueing. Target: p50 < 20 ms.
 */
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { log, measure, median } from '../lib/load.js'
import { bearer, checkRun, heading } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant, type SeededTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'

const DAYS = 365
/** The service's SVC_TIME_ZONE, the zone of the report's days and of the roll-up. */
const TIME_ZONE = 'Asia/Seoul'
const QUIET_PER_DAY = 4
const BUCKETS_PER_DAY = 96
/** Requests of the one-at-a-time run, for p50 and p95. */
const SEQUENTIAL_REQUESTS = 1000

/** Today in TIME_ZONE, and the day 364 days before it: 365 local days. */
function lastYear(): { from: string; to: string } {
  const format = (at: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: TIME_ZONE }).format(at)
  const now = Date.now()
  return { from: format(new Date(now - (DAYS - 1) * 86_400_000)), to: format(new Date(now)) }
}

/**
 * `perDay` messages on each of the last DAYS days, spread evenly over the day (one per 15-minute bucket at 96), as a
 * send leaves them (never due: nothing dispatches them), then rolled up.
 */
async function fillYear(owner: Kysely<DB>, tenant: SeededTenant, perDay: number): Promise<void> {
  await sql`
    insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
      estimated_segments, unit_price, total_price, status, success_count, fail_count, provider, next_attempt_at,
      created_at, updated_at)
    select ${tenant.tenantId}, ${tenant.ownerId}, 'GUARDIAN', 1 + g % 5, 'Notice ' || g, 'Hello {name}',
      case when g % 7 = 0 then 'LMS' else 'SMS' end, 1 + g % 5, case when g % 7 = 0 then 50 else 20 end,
      (1 + g % 5) * case when g % 7 = 0 then 50 else 20 end, 'SENT', 1 + g % 5, 0, 'mock', now() + interval '365 days',
      now() - make_interval(mins => (g * ${Math.floor((24 * 60) / perDay)})::int), now()
    from generate_series(0, ${DAYS * perDay - 1}) g`.execute(owner)
  await sql`select svc_roll_up_sms_usage(${TIME_ZONE}::text)`.execute(owner)
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** One request at a time over a kept-alive connection: the latency without queueing. */
async function sequential(url: string, token: string): Promise<{ p50: number; p95: number; days: number }> {
  const timings: number[] = []
  let days = 0
  for (let i = 0; i < SEQUENTIAL_REQUESTS; i++) {
    const started = performance.now()
    const response = await fetch(url, { headers: bearer(token) })
    const body = (await response.json()) as { days?: unknown[] }
    timings.push(performance.now() - started)
    if (response.status !== 200) throw new Error(`GET /v1/sms/usage answered ${response.status}: ${JSON.stringify(body)}`)
    days = body.days?.length ?? 0
  }
  timings.sort((a, b) => a - b)
  return { p50: median(timings), p95: percentile(timings, 95), days }
}

export async function usage(ctx: BenchContext): Promise<void> {
  heading('GET /v1/sms/usage')
  const database = await ctx.database()
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-usage',
    env: { SVC_TIME_ZONE: TIME_ZONE },
  })
  const { from, to } = lastYear()
  const path = `/v1/sms/usage?from=${from}&to=${to}`
  try {
    const variants = [
      { name: `${QUIET_PER_DAY} msgs/day`, perDay: QUIET_PER_DAY },
      { name: `${BUCKETS_PER_DAY} buckets/day`, perDay: BUCKETS_PER_DAY },
    ]
    for (const variant of variants) {
      const tenant = await seedTenant(service.url, database.owner, 4)
      const started = performance.now()
      await fillYear(database.owner, tenant, variant.perDay)
      await sql`vacuum analyze sms_usage, sms_usage_days, sms_usage_zones`.execute(database.owner)
      log(`  ${variant.name}: ${(DAYS * variant.perDay).toLocaleString('en')} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`)
      const sessions = await loginStaff(service.url, tenant, 4)
      const label = `GET /v1/sms/usage (a year, ${variant.name})`
      const loaded = await measure({
        label,
        watch: { service: service.pid },
        spec: () => ({
          url: service.url,
          method: 'GET' as const,
          path,
          connections: benchConfig.connections,
          duration: benchConfig.duration,
          connectionHeaders: sessions.map((session) => bearer(session.access)),
        }),
      })
      checkRun(ctx, label, service, loaded)
      const alone = await sequential(`${service.url}${path}`, sessions[0]!.access)
      log(`  ${label}, one at a time: p50 ${alone.p50.toFixed(2)} ms, p95 ${alone.p95.toFixed(2)} ms, ${alone.days} days`)
      ctx.addRow({
        scenario: label,
        value: loaded.rps,
        unit: 'req/s',
        p50: loaded.p50,
        p99: loaded.p99,
        target: 'p50 < 20 ms',
        met: loaded.p50 < 20 && loaded.failures === 0,
        notes: `${loaded.cpu}; one at a time (${SEQUENTIAL_REQUESTS}): p50 ${alone.p50.toFixed(2)} ms, p95 ${alone.p95.toFixed(2)} ms`,
      })
    }
  } finally {
    await service.stop()
  }
}

if (isMain(import.meta.url)) await runStandalone(usage)
