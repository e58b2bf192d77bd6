import type { FastifyBaseLogger } from 'fastify'
import { setMaxListeners } from 'node:events'
import { isIP } from 'node:net'
import type { Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import type { KeyRing } from '../crypto/key-ring.js'
import { withTenant } from '../../db/tenant-transaction.js'
import {
  claimDueEvents,
  findClaimedEvent,
  recordAttempt,
  releaseClaim,
  type AttemptRecord,
  type ClaimedEvent,
  type EventClaim,
} from '../../db/repos/events/webhook-events.js'
import type { DatabaseOutage } from '../observability/database-outage.js'
import { noMetrics, type MetricsRecorder } from '../observability/metrics.js'
import { isPublicAddress } from './address-policy.js'
import { hostOf } from './endpoint-url.js'
import { RETRY_DELAYS_SECONDS } from './event-types.js'
import { keepAliveAgents, postEvent, type PinnedTarget } from './post-event.js'
import { systemResolve, type ResolveHost } from './resolve-host.js'
import { signedHeaders } from './signature.js'
import { unsealSigningSecret } from './signing-secret.js'

export interface DelivererOptions {
  db: Kysely<DB>
  log: FastifyBaseLogger
  /** Open the tenants' signing secrets (lib/events/signing-secret.ts). */
  sealingKey: KeyRing
  /** SVC_WEBHOOK_TIMEOUT_MS: a delivery without a 2xx within this is a failed attempt. */
  timeoutMs: number
  /** SVC_WEBHOOK_ALLOW_PRIVATE: plain http and private addresses allowed (tests, private networks). */
  allowPrivate: boolean
  /** Deliveries in flight at once (SVC_WEBHOOK_CONCURRENCY). */
  concurrency: number
  /** Deliveries of one tenant in flight at once, across every instance (SVC_WEBHOOK_TENANT_CONCURRENCY). */
  tenantConcurrency: number
  /** Resolves the endpoint's host at each delivery; tests give a name that changes its answer. */
  resolve?: ResolveHost
  metrics?: MetricsRecorder
  /** Where failures because the database is out of reach go instead of a line each (plugins/platform/db.ts). */
  databaseOutage?: Pick<DatabaseOutage, 'absorbs' | 'reachable'>
}

export interface Deliverer {
  /** Claims due events for every free worker now; calls while it claims are folded into one more round. */
  kick(): void
  /** One claim of up to `concurrency` events, delivered; resolves with how many were claimed (tests). */
  runOnce(): Promise<number>
  /**
   * No new claims; deliveries in flight end and are recorded, those still waiting for an answer after
   * STOP_GRACE_MS abandoned (their claims lapse and another instance delivers them: at least once).
   */
  stop(): Promise<void>
}

/** Within the process's close timeout (lib/shutdown-budget.ts), whatever SVC_WEBHOOK_TIMEOUT_MS is. */
const STOP_GRACE_MS = 10_000

type Prepared = { target: PinnedTarget; secret: string } | { refused: string; final: boolean }

/** The attempt after `attempts` failed ones: retried on the schedule, or given up once it has run out. */
function failure(attempts: number, error: string): AttemptRecord {
  const delay = RETRY_DELAYS_SECONDS[attempts - 1]
  return delay === undefined ? { kind: 'given-up', error } : { kind: 'retry', retryAt: new Date(Date.now() + delay * 1000), error }
}

/** A message for logs and the event row: the error, never the URL (its path or query may carry a token). */
const describe = (outcome: { status: number } | { error: string }) => ('status' in outcome ? `HTTP ${outcome.status}` : outcome.error)

/**
 * Delivers the outbox (webhook_events) with leases like dispatch: due events are claimed in batches (SKIP LOCKED),
 * and each free worker takes the next claim, signs it (Standard Webhooks 1.0), POSTs it and records the answer under
 * its claim. A worker that finishes takes the next at once, so one receiver that hangs holds one worker for at most
 * the time limit while the others go on. The claim is fair across tenants and holds each to `tenantConcurrency`
 * claims at once, so a tenant whose receiver hangs holds that many workers at most, and another tenant's event waits
 * one round of the workers at most. The lease outlasts the time limit: the claims of a dead instance lapse and another
 * delivers them, so an event arrives at least once (receivers drop repeats by `webhook-id`).
 */
export function createWebhookDeliverer(options: DelivererOptions): Deliverer {
  const { db, log } = options
  const metrics = options.metrics ?? noMetrics
  const outage = options.databaseOutage
  const resolve = options.resolve ?? systemResolve
  const leaseSeconds = Math.ceil(options.timeoutMs / 1000) + 30
  const agents = keepAliveAgents(options.concurrency)
  const inFlight = new Set<Promise<void>>()
  /** Claimed, not started yet: a worker takes the next one the moment it is free. */
  const waiting: EventClaim[] = []
  let stopping = false
  const abandon = new AbortController()
  // Each delivery in flight listens for it (lib/events/post-event.ts): up to the workers of the loop and a runOnce.
  setMaxListeners(2 * options.concurrency, abandon.signal)
  let claiming: Promise<void> | null = null
  let again = false

  /** The address this attempt may go to, checked now (the name may point elsewhere than when it was set). */
  async function target(url: URL): Promise<PinnedTarget | string> {
    if (!options.allowPrivate && url.protocol !== 'https:') return 'the URL is not https'
    const host = hostOf(url)
    const addresses = isIP(host) ? [host] : await resolve(host).catch(() => [])
    if (addresses.length === 0) return `${host} does not resolve`
    const refused = options.allowPrivate ? undefined : addresses.find((address) => !isPublicAddress(address))
    // The address is named for operators (the log and the event row); the tenant's answers never show it.
    if (refused !== undefined) return `${host} resolves to a refused address (${refused})`
    return { url, address: addresses[0]! }
  }

  async function prepare(claim: EventClaim, event: ClaimedEvent): Promise<Prepared> {
    if (event.url === null || event.secretSealed === null) return { refused: 'the endpoint was removed', final: true }
    const secret = unsealSigningSecret(options.sealingKey, claim.tenantId, event.secretSealed)
    // The key that sealed it is gone (the service's secrets changed): no later attempt can sign either.
    if (secret === null) return { refused: 'the signing secret cannot be opened with this service key', final: true }
    const pinned = await target(new URL(event.url))
    return typeof pinned === 'string' ? { refused: pinned, final: false } : { target: pinned, secret }
  }

  async function attempt(claim: EventClaim, event: ClaimedEvent): Promise<AttemptRecord> {
    const prepared = await prepare(claim, event)
    const attempts = event.attempts + 1
    if ('refused' in prepared) {
      metrics.webhookDelivery('refused')
      log.warn({ tenantId: claim.tenantId, eventId: claim.eventId, attempt: attempts, reason: prepared.refused }, 'webhook not attempted')
      return prepared.final ? { kind: 'given-up', error: prepared.refused } : failure(attempts, prepared.refused)
    }
    const webhookId = `msg_${event.webhookId.replaceAll('-', '')}`
    const headers = signedHeaders(prepared.secret, webhookId, Math.floor(Date.now() / 1000), event.body)
    const outcome = await postEvent(prepared.target, headers, event.body, options.timeoutMs, agents, abandon.signal)
    if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) return { kind: 'delivered' }
    return failure(attempts, describe(outcome))
  }

  async function deliver(claim: EventClaim): Promise<void> {
    const event = await withTenant(db, claim.tenantId, (trx) => findClaimedEvent(trx, claim))
    if (!event) return
    const record = await attempt(claim, event)
    const recorded = await withTenant(db, claim.tenantId, (trx) => recordAttempt(trx, claim, record))
    if (!recorded) log.warn({ tenantId: claim.tenantId, eventId: claim.eventId }, 'webhook claim lost before its attempt was recorded')
    if (record.kind === 'delivered') metrics.webhookDelivery('delivered')
    else if (record.kind === 'retry') metrics.webhookDelivery('failed')
    else {
      metrics.webhookDelivery('given_up')
      log.warn({ tenantId: claim.tenantId, eventId: claim.eventId, attempts: event.attempts + 1, error: record.error }, 'webhook event given up')
    }
  }

  /** Delivers one claim; `claimNext`: the worker then claims again (the loop), not in runOnce. */
  function start(claim: EventClaim, claimNext: boolean): Promise<void> {
    const running: Promise<void> = deliver(claim)
      .catch((error: unknown) => {
        if (!outage?.absorbs('webhooks', error)) log.error({ err: error, eventId: claim.eventId }, 'webhook delivery failed; its lease lapses and it is tried again')
      })
      .finally(() => {
        inFlight.delete(running)
        if (claimNext) kick()
      })
    inFlight.add(running)
    return running
  }

  function startWaiting(): void {
    while (!stopping && inFlight.size < options.concurrency && waiting.length > 0) void start(waiting.shift()!, true)
  }

  /**
   * Starts waiting claims on free workers, and claims again once those in hand no longer keep every worker busy for
   * another round: up to twice the workers at a time, so one claim (a scan of the due events) serves a batch of
   * deliveries rather than one. A claim waits here at most a round of deliveries, far within its lease.
   */
  async function claimForFreeWorkers(): Promise<void> {
    startWaiting()
    while (!stopping && inFlight.size + waiting.length <= options.concurrency) {
      const claims = await claimDueEvents(db, 2 * options.concurrency - inFlight.size - waiting.length, leaseSeconds, options.tenantConcurrency)
      outage?.reachable()
      waiting.push(...claims)
      startWaiting()
      if (claims.length === 0) return
    }
  }

  function kick(): void {
    if (stopping) return
    if (claiming) {
      again = true
      return
    }
    claiming = (async () => {
      try {
        do {
          again = false
          await claimForFreeWorkers().catch((error: unknown) => {
            if (!outage?.absorbs('webhooks', error)) log.warn({ err: error }, 'could not claim webhook events')
          })
        } while (again && !stopping)
      } finally {
        // In the same step as the last look at `again`: a kick a moment later starts a round of its own, never lost.
        claiming = null
      }
    })()
  }

  return {
    kick,
    async runOnce() {
      const claims = await claimDueEvents(db, options.concurrency, leaseSeconds, options.tenantConcurrency)
      await Promise.all(claims.map((claim) => start(claim, false)))
      return claims.length
    },
    async stop() {
      stopping = true
      const grace = setTimeout(() => abandon.abort(), STOP_GRACE_MS)
      try {
        await claiming
        // Claims never started go back at once rather than after their lease: another instance delivers them.
        await Promise.allSettled(waiting.splice(0).map((claim) => withTenant(db, claim.tenantId, (trx) => releaseClaim(trx, claim))))
        await Promise.allSettled([...inFlight])
      } finally {
        clearTimeout(grace)
      }
      agents.http.destroy()
      agents.https.destroy()
    },
  }
}
