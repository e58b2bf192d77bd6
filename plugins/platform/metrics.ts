import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { AppError } from '../../lib/errors.js'
import { noMetrics, type MetricsRecorder } from '../../lib/observability/metrics.js'
import { inQuietHours } from '../../lib/advertising/quiet-hours.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where outcomes are counted (lib/observability/metrics.ts); a no-op with SVC_METRICS=off. */
    metrics: MetricsRecorder
  }
}

/** Off the public API: not in the OpenAPI document, not under /v1. */
export const METRICS_PATH = '/metrics'

const digest = (value: string) => createHash('sha256').update(value).digest()

/** True when `Authorization: Bearer <token>` names the configured token (constant time over digests). */
function presentsToken(header: string | undefined, token: string): boolean {
  const presented = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined
  return presented !== undefined && timingSafeEqual(digest(presented), digest(token))
}

/** Dispatch state read at scrape time: aggregates across tenants through a function that returns nothing else. */
interface DispatchStats {
  pending: number
  dispatched: number
  due: number
  oldestDueSeconds: number
}

async function dispatchStats(app: FastifyInstance): Promise<DispatchStats | null> {
  try {
    const advertisingOpen = !inQuietHours(app.clock(), app.env.SVC_TIME_ZONE)
    const { rows } = await sql<DispatchStats>`select * from svc_sms_dispatch_stats(${advertisingOpen}::boolean)`.execute(app.db)
    return rows[0] ?? null
  } catch (error) {
    // A scrape during a database outage still answers: the process metrics are what an operator needs then. The
    // outage itself is logged once (plugins/platform/db.ts), not once per scrape.
    if (!app.databaseOutage.absorbs('metrics', error)) app.log.warn({ err: error }, 'metrics: could not read dispatch state')
    return null
  }
}

function register(app: FastifyInstance): MetricsRecorder {
  // One registry per app: several apps in one process (tests, workers) never share or collide on series.
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern and status class',
    labelNames: ['method', 'route', 'status_class'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  // By how the caller proved who it is, never by which caller or key: the label has four values whatever the load.
  const byCredential = new Counter({
    name: 'svc_http_requests_by_credential_total',
    help: 'HTTP requests by credential kind: cookie, bearer_token (an access token), api_key, none',
    labelNames: ['credential'],
    registers: [registry],
  })
  // One hook for both, and a callback rather than an async function: it runs on every request, and an async hook
  // costs a promise and a turn of the microtask queue each time.
  app.addHook('onResponse', (request, reply, done) => {
    // The pattern (`/v1/sms/:id`), never the URL: label values stay a closed set.
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched')
    httpDuration.observe(
      { method: request.method, route, status_class: `${Math.floor(reply.statusCode / 100)}xx` },
      reply.elapsedTime / 1000,
    )
    byCredential.inc({ credential: request.credentialKind ?? 'none' })
    done()
  })

  const logins = new Counter({ name: 'svc_auth_logins_total', help: 'Login attempts by outcome', labelNames: ['outcome'], registers: [registry] })
  const lockouts = new Counter({ name: 'svc_auth_lockouts_total', help: 'Logins refused because the identity is locked', registers: [registry] })
  const reuses = new Counter({ name: 'svc_auth_refresh_reuse_total', help: 'Refresh token reuse detections (session revoked)', registers: [registry] })
  const providerCalls = new Counter({ name: 'svc_sms_provider_calls_total', help: 'SMS provider calls by outcome', labelNames: ['outcome'], registers: [registry] })
  const providerDuration = new Histogram({
    name: 'svc_sms_provider_call_duration_seconds',
    help: 'SMS provider call latency by outcome',
    labelNames: ['outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const retries = new Counter({ name: 'svc_sms_retries_total', help: 'Dispatch attempts that scheduled a retry', registers: [registry] })
  const webhooks = new Counter({
    name: 'svc_webhook_deliveries_total',
    help: 'Webhook attempts by outcome: delivered, failed (retried), given_up (the last), refused (address not allowed)',
    labelNames: ['outcome'],
    registers: [registry],
  })
  const reports = new Counter({ name: 'svc_sms_delivery_reports_total', help: 'Webhook delivery reports by result', labelNames: ['result'], registers: [registry] })

  // Registered (so read) before the dispatch gauges, whose query would otherwise count itself as pool use.
  new Gauge({
    name: 'svc_db_pool_connections',
    help: 'Runtime pool connections by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = app.database.poolStats?.()
      if (!pool) return
      this.set({ state: 'in_use' }, pool.total - pool.idle)
      this.set({ state: 'idle' }, pool.idle)
    },
  })
  new Gauge({
    name: 'svc_db_pool_waiting_requests',
    help: 'Queries waiting for a runtime pool connection',
    registers: [registry],
    collect() {
      const pool = app.database.poolStats?.()
      if (pool) this.set(pool.waiting)
    },
  })

  let stats: Promise<DispatchStats | null> | null = null
  // The three dispatch gauges share one query per scrape.
  const readStats = () => (stats ??= dispatchStats(app).finally(() => setImmediate(() => (stats = null))))
  new Gauge({
    name: 'svc_sms_messages',
    help: 'Messages not yet settled, by status (read from the database at scrape time)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const current = await readStats()
      if (!current) return
      this.set({ status: 'PENDING' }, current.pending)
      this.set({ status: 'DISPATCHED' }, current.dispatched)
    },
  })
  // One number of the dispatch state per gauge.
  const dispatchGauge = (name: string, help: string, value: (current: DispatchStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const current = await readStats()
        if (current) this.set(value(current))
      },
    })
  dispatchGauge('svc_sms_due_backlog', 'PENDING messages whose attempt time has come', (current) => current.due)
  dispatchGauge(
    'svc_sms_oldest_due_age_seconds',
    'How long the oldest due message has been waiting (0 when none is due)',
    (current) => current.oldestDueSeconds,
  )
  const token = app.env.SVC_METRICS_TOKEN
  app.get(METRICS_PATH, { config: { access: 'metrics-token', requestLog: 'debug' }, schema: { hide: true } }, async (request, reply) => {
    if (token !== undefined && !presentsToken(request.headers.authorization, token)) {
      throw new AppError('AUTH_002', 'This endpoint needs the metrics bearer token.', { headers: { 'www-authenticate': 'Bearer' } })
    }
    return reply.type(registry.contentType).send(await registry.metrics())
  })

  return {
    login: (outcome) => logins.inc({ outcome }),
    lockout: () => lockouts.inc(),
    refreshReuse: () => reuses.inc(),
    providerCall: (outcome, seconds) => {
      providerCalls.inc({ outcome })
      providerDuration.observe({ outcome }, seconds)
    },
    retry: () => retries.inc(),
    deliveryReports: (processed, ignored) => {
      reports.inc({ result: 'processed' }, processed)
      reports.inc({ result: 'ignored' }, ignored)
    },
    webhookDelivery: (outcome) => webhooks.inc({ outcome }),
  }
}

/** Prometheus metrics (docs/operations.md#metrics): `GET /metrics` unless SVC_METRICS=off, behind SVC_METRICS_TOKEN when set. */
export default fp(
  async (app) => {
    app.decorate('metrics', app.env.SVC_METRICS === 'on' ? register(app) : noMetrics)
  },
  { name: 'metrics', dependencies: ['env', 'access', 'db', 'problem', 'clock'] },
)
