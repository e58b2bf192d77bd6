import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import type { DB, SmsStatus } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { insertPendingMessage, insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { buildTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'


// Delivery tests (test/events): receivers on loopback, academies of an isolated database (the deliverer claims
// across every tenant of its database), and the event rows as the owner reads them.

export interface DeliveryBed {
  iso: IsolatedDatabase
  app: FastifyInstance
  /** A receiver closed after the test. */
  receiver(answers?: Answer[]): Promise<Receiver>
}

/**
 * A database of the file's own with an app on it, made before the file's tests: no background loop
 * (SVC_SMS_DISPATCHER=off), so the tests drive delivery with runOnce; loopback receivers allowed. After each test
 * its receivers close and the events it left waiting are settled, so the next test's claims see only its own. Read
 * the fields inside tests and hooks only.
 */
export function useDeliveryBed(env: Record<string, string> = {}): DeliveryBed {
  const receivers: Receiver[] = []
  const bed = {
    async receiver(answers?: Answer[]) {
      const started = await startReceiver(answers)
      receivers.push(started)
      return started
    },
  } as DeliveryBed
  beforeAll(async () => {
    bed.iso = await isolatedDatabase()
    bed.app = await buildTestApp({ DATABASE_URL: bed.iso.url, SVC_SMS_DISPATCHER: 'off', SVC_WEBHOOK_ALLOW_PRIVATE: 'true', ...env })
  })
  afterEach(async () => {
    await settleEvents(bed.iso.owner)
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })
  afterAll(async () => {
    await bed.app?.close()
    await bed.iso?.drop()
  })
  return bed
}

/** One request as a receiver got it: the raw body bytes (what the signature covers), headers, when it arrived. */
export interface ReceivedRequest {
  body: string
  headers: Record<string, string>
  url: string
  arrivedAt: number
  /** When its connection closed (the deliverer gave up waiting, or the answer went out); null while open. */
  closedAt: number | null
}

/**
 * What a receiver does with a request: answer a status (with headers, once `after` settles and `delayMs` more have
 * passed), or never answer ('hang').
 */
export type Answer = number | { status: number; headers?: Record<string, string>; after?: Promise<unknown>; delayMs?: number } | 'hang'

export interface Receiver {
  url: string
  port: number
  requests: ReceivedRequest[]
  /** The answer to each next request, in turn; the last one repeats. */
  answers: Answer[]
  /** Requests that have arrived and are not answered or closed yet, now and at the most so far. */
  open: number
  mostOpen: number
  close(): Promise<void>
}

/** A node:http receiver on 127.0.0.1 recording every request; answers 204 unless told otherwise. */
export async function startReceiver(answers: Answer[] = [204], path = '/hooks/sms'): Promise<Receiver> {
  const requests: ReceivedRequest[] = []
  const receiver = { requests, answers, open: 0, mostOpen: 0 } as Receiver
  let served = 0
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value
      const record: ReceivedRequest = {
        body: Buffer.concat(chunks).toString('utf8'),
        headers,
        url: request.url ?? '',
        arrivedAt: Date.now(),
        closedAt: null,
      }
      requests.push(record)
      receiver.mostOpen = Math.max(receiver.mostOpen, ++receiver.open)
      response.on('close', () => {
        record.closedAt = Date.now()
        receiver.open--
      })
      const list = receiver.answers
      const answer = list[Math.min(served++, list.length - 1)] ?? 204
      if (answer === 'hang') return
      const { status, headers: extra, after, delayMs } = typeof answer === 'number' ? { status: answer, headers: {}, after: undefined, delayMs: 0 } : answer
      void Promise.resolve(after)
        .then(() => new Promise((resolve) => setTimeout(resolve, delayMs ?? 0)))
        .then(() => {
          if (!response.destroyed) response.writeHead(status, extra).end()
        })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  receiver.port = port
  receiver.url = `http://127.0.0.1:${port}${path}`
  receiver.close = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return receiver
}

/** Verifies a request with the Standard Webhooks reference library and answers the event it carries (throws if not). */
export function verified(secret: string, request: ReceivedRequest): WebhookEvent {
  return new Webhook(secret).verify(request.body, request.headers) as WebhookEvent
}

export interface WebhookEvent {
  type: 'sms.message.completed' | 'sms.message.cancelled'
  timestamp: string
  data: {
    messageId: number
    status: SmsStatus
    purpose: 'INFORMATIONAL' | 'ADVERTISEMENT'
    recipientCount: number
    successCount: number
    failCount: number
    optedOutCount: number
  }
}

type Headers = { authorization: string }

/** An academy of the isolated database: its OWNER (the endpoint is theirs) and a MANAGER who sends. */
export interface IsolatedAcademy {
  tenantId: number
  slug: string
  senderId: number
  owner: { headers: Headers }
  manager: { headers: Headers }
}

async function headersFor(app: FastifyInstance, tenant: { tenantId: number; slug: string }, userId: number, role: 'OWNER' | 'MANAGER') {
  const { access } = await issueTokenPair(
    app.tokenKeys,
    { userId, tenantId: tenant.tenantId, tenantSlug: tenant.slug, role, sid: randomUUID() },
    { accessSeconds: 3600, refreshSeconds: 7200 },
  )
  return { headers: { authorization: `Bearer ${access.token}` } }
}

export async function isolatedAcademy(app: FastifyInstance, owner: Kysely<DB>): Promise<IsolatedAcademy> {
  const tenant = await insertTenantAndSender(owner)
  const user = await owner
    .insertInto('users')
    .values({
      tenantId: tenant.tenantId,
      userLoginId: `owner-${tenant.slug}`,
      passwordHash: 'x',
      name: 'Owner',
      role: 'OWNER',
      avatarSeed: 'seed',
      updatedAt: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return {
    ...tenant,
    owner: await headersFor(app, tenant, user.id, 'OWNER'),
    manager: await headersFor(app, tenant, tenant.senderId, 'MANAGER'),
  }
}

/** PUT /v1/webhook-endpoint as the OWNER; answers the secret of a new endpoint. */
export async function putEndpoint(app: FastifyInstance, academy: IsolatedAcademy, url: string, events?: string[]): Promise<string> {
  const response = await app.inject({
    method: 'PUT',
    url: '/v1/webhook-endpoint',
    headers: academy.owner.headers,
    payload: events ? { url, events } : { url },
  })
  expect(response.statusCode, response.body).toBe(200)
  const { secret } = response.json() as { secret?: string }
  expect(secret).toMatch(/^whsec_/)
  return secret!
}

/** POST /v1/webhook-endpoint/secret as the OWNER; answers the new secret. */
export async function rotateSecret(app: FastifyInstance, academy: IsolatedAcademy): Promise<string> {
  const response = await app.inject({ method: 'POST', url: '/v1/webhook-endpoint/secret', headers: academy.owner.headers })
  expect(response.statusCode, response.body).toBe(200)
  return (response.json() as { secret: string }).secret
}

/** The academy's event rows as the owner reads them (past RLS), oldest first. */
export function eventRows(owner: Kysely<DB>, tenantId: number) {
  return owner.selectFrom('webhookEvents').selectAll().where('tenantId', '=', tenantId).orderBy('id').execute()
}

export async function eventRow(owner: Kysely<DB>, eventId: number) {
  return owner.selectFrom('webhookEvents').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow()
}

/** Makes an event due now, as if its retry delay had passed (the deliverer claims only due events). */
export async function makeDue(owner: Kysely<DB>, eventId: number): Promise<void> {
  await sql`update webhook_events set next_attempt_at = now() - interval '1 second' where id = ${eventId}`.execute(owner)
}

/**
 * Ends every event still waiting (an earlier test's receiver is closed): the deliverer claims the due events of the
 * whole database, and a test counts its own claims.
 */
export async function settleEvents(owner: Kysely<DB>): Promise<void> {
  await sql`update webhook_events set given_up_at = now() where delivered_at is null and given_up_at is null`.execute(owner)
}

/** A staff message not due for a year (no dispatcher takes it), whose status the test moves. */
export function heldMessage(owner: Kysely<DB>, academy: IsolatedAcademy): Promise<number> {
  return insertPendingMessage(owner, { ...academy, nextAttemptAt: new Date(Date.now() + 365 * 86_400_000) })
}

export interface StatusChange {
  status: SmsStatus
  successCount?: number
  failCount?: number
  optedOutCount?: number
}

/** Moves a message's status as the runtime role in the tenant's transaction, as the dispatcher or a report does. */
export async function moveStatus(app: FastifyInstance, tenantId: number, smsId: number, change: StatusChange): Promise<void> {
  await withTenant(app.db, tenantId, (trx) => trx.updateTable('smsMessages').set(change).where('id', '=', smsId).execute())
}

/** A message with an event waiting: completed (SENT, both recipients delivered) under an endpoint already set. */
export async function completedMessage(app: FastifyInstance, owner: Kysely<DB>, academy: IsolatedAcademy): Promise<number> {
  const smsId = await heldMessage(owner, academy)
  await moveStatus(app, academy.tenantId, smsId, { status: 'SENT', successCount: 2, failCount: 0 })
  return smsId
}

/** The value of one series in Prometheus text (`name{labels} value`), 0 when the series is not there yet. */
export async function metric(app: FastifyInstance, series: string): Promise<number> {
  const response: LightMyRequestResponse = await app.inject({ method: 'GET', url: '/metrics' })
  const line = response.body.split('\n').find((entry) => entry.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

export const deliveries = (outcome: 'delivered' | 'failed' | 'given_up' | 'refused') => `svc_webhook_deliveries_total{outcome="${outcome}"}`

/** The webhook-id a receiver sees for an event row: `msg_` and the row's uuid without dashes. */
export const webhookIdOf = (row: { webhookId: string }) => `msg_${row.webhookId.replaceAll('-', '')}`
