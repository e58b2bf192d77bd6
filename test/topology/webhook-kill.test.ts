import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { call, expectStatus, registerOwner, type Owner } from './client.js'
import { Child, freePort, waitFor } from './processes.js'
import { adminQuery, HMAC_SECRET, JWT_SECRET, parentEnvForService, serverUrl, withDatabase } from './stack.js'

/**
 * At least once across a crash (docs/api.md#events): the instance delivering an event is killed with SIGKILL while
 * its request waits at the receiver, so it records nothing and releases nothing. Its claim must lapse and another
 * instance deliver the same event: same webhook-id, a valid signature, the row delivered. Two `server.ts` instances
 * (run by tsx, one after the other) on a database of the file's own, straight on PostgreSQL; no pooler or proxy is
 * needed for this, so only a PostgreSQL server is required.
 */

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const START_TIMEOUT_MS = 30_000
// The time limit of one delivery; the lease is this plus 30 s (lib/events/deliverer.ts), 40 s here.
const WEBHOOK_TIMEOUT_MS = 10_000

async function postgresMissing(): Promise<string | null> {
  const client = new pg.Client({ connectionString: serverUrl(), connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return null
  } catch (error) {
    return `no PostgreSQL server answers: ${(error as Error).message}`
  } finally {
    await client.end().catch(() => undefined)
  }
}

const missing = await postgresMissing()
if (missing) console.warn(`[topology] webhook kill test skipped: ${missing}`)
const describeWithPostgres = missing ? (name: string, fn: () => void) => describe.skip(`${name} [skipped: ${missing}]`, fn) : describe

/** The parent's environment less anything the service reads, plus a production configuration (as stack.ts does). */
function serviceEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...parentEnvForService(),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The same secret on both instances: the key that seals the signing secrets derives from it.
    SVC_JWT_SECRET: JWT_SECRET,
    SVC_INTERNAL_HMAC_SECRET: HMAC_SECRET,
    SVC_BCRYPT_COST: '4',
    SVC_LOGIN_IP_PER_MINUTE: '1000000',
    SVC_DB_POOL_MAX: '5',
    SVC_SMS_PROVIDER: 'mock',
    ...overrides,
  }
}

interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** The caller went away before an answer (the connection closed under a held request). */
  callerGone: boolean
}

interface Receiver {
  url: string
  received: Received[]
  close(): Promise<void>
}

/** A tenant's endpoint on loopback: holds the first request open and never answers it; answers 204 to the others. */
async function startReceiver(): Promise<Receiver> {
  const received: Received[] = []
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry: Received = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), callerGone: false }
      received.push(entry)
      if (received.length === 1) {
        response.on('close', () => (entry.callerGone = true))
        return
      }
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/sms`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

describeWithPostgres('topology: a webhook delivery across the kill -9 of the delivering instance', () => {
  const database = `svc_topo_webhook_${Date.now()}_${randomBytes(3).toString('hex')}`
  const directUrl = withDatabase(new URL(serverUrl()), database)
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-topology-webhook-'))
  const children: Child[] = []
  let admin: pg.Pool
  let receiver: Receiver

  async function startInstance(name: string): Promise<{ child: Child; url: string }> {
    const port = await freePort()
    const child = new Child(name, process.execPath, ['--import', 'tsx', 'server.ts'], {
      cwd: REPO_ROOT,
      env: serviceEnv({
        PORT: String(port),
        DATABASE_URL: directUrl,
        DATABASE_MIGRATION_URL: directUrl,
        SVC_MIGRATE_ON_START: 'false',
        SVC_DATA_DIR: join(dataDir, name),
        SVC_SMS_DISPATCHER: 'on',
        SVC_SMS_SCHEDULER_CRON: '* * * * * *',
        SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
        SVC_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      }),
    })
    children.push(child)
    const url = `http://127.0.0.1:${port}`
    await waitFor(
      `${name} to answer /actuator/health`,
      async () => {
        child.assertRunning()
        const response = await fetch(`${url}/actuator/health`, { signal: AbortSignal.timeout(1000) })
        await response.arrayBuffer()
        return response.status === 200 ? true : undefined
      },
      START_TIMEOUT_MS,
      100,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${name} ---\n${child.tail()}`)
    })
    return { child, url }
  }

  beforeAll(async () => {
    await adminQuery(`create database ${database}`)
    const migrate = new Child('migrate', process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], {
      cwd: REPO_ROOT,
      env: serviceEnv({ DATABASE_URL: directUrl, DATABASE_MIGRATION_URL: directUrl }),
    })
    await waitFor('the migration to finish', () => (migrate.exited ? true : undefined), START_TIMEOUT_MS)
    if (migrate.exited?.code !== 0) throw new Error(`migration failed:\n${migrate.tail()}`)
    admin = new pg.Pool({ connectionString: directUrl, max: 2 })
    receiver = await startReceiver()
  }, 90_000)

  afterAll(async () => {
    for (const child of children) await child.stop('SIGTERM', 5000)
    await receiver?.close()
    await admin?.end()
    await adminQuery(`drop database if exists ${database} with (force)`)
    rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  beforeEach((context) => {
    context.onTestFailed(() => {
      const output = children.map((child) => `--- ${child.name} (pid ${child.pid}) ---\n${child.tail(20, 400)}`).join('\n')
      console.log(`[topology] process output after "${context.task.name}":\n${output}`)
    })
  })

  /** A staff message moved to SENT the way a delivery report moves it: as the runtime role, in the tenant's context. */
  async function completeMessage(owner: Owner): Promise<number> {
    // Already handed to the provider and not due: the instances' dispatchers leave it alone.
    const { rows } = await admin.query<{ id: string }>(
      `insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
         estimated_segments, unit_price, total_price, status, provider, next_attempt_at, dispatched_at, updated_at)
       values ($1, $2, 'CUSTOM', 1, 'Kill', 'Hello {name}', 'SMS', 1, 20, 20, 'DISPATCHED', 'mock',
         now() + interval '365 days', now(), now())
       returning id`,
      [owner.tenantId, owner.userId],
    )
    const messageId = Number(rows[0]!.id)
    const client = await admin.connect()
    try {
      await client.query('begin')
      await client.query('set local role svc_app')
      await client.query(`select set_config('app.tenant_id', $1, true)`, [String(owner.tenantId)])
      await client.query(`update sms_messages set status = 'SENT', success_count = 1, updated_at = now() where id = $1`, [messageId])
      await client.query('commit')
    } catch (error) {
      await client.query('rollback')
      throw error
    } finally {
      client.release()
    }
    return messageId
  }

  async function eventRow(tenantId: number) {
    const { rows } = await admin.query(
      `select id::int, webhook_id::text, attempts, claim_token is not null as claimed, claimed_until > now() as lease_running,
              delivered_at is not null as delivered, given_up_at, last_error
       from webhook_events where tenant_id = $1`,
      [tenantId],
    )
    return rows
  }

  it('delivers the event again from the surviving instance, with the same webhook-id and a valid signature', async () => {
    const first = await startInstance('svc-1')
    const owner = await registerOwner(first.url)
    const endpoint = expectStatus(
      await call(first.url, 'PUT', '/v1/webhook-endpoint', { token: owner.tokens.access, body: { url: receiver.url } }),
      200,
      'webhook endpoint',
    ).json as { secret: string }
    const messageId = await completeMessage(owner)

    // Instance 1 claims the event on a scheduler tick and its request hangs at the receiver.
    const held = await waitFor('instance 1 to send the event', () => receiver.received[0], 20_000, 10)
    expect(await eventRow(owner.tenantId)).toMatchObject([{ attempts: 0, claimed: true, lease_running: true, delivered: false }])

    await first.child.kill9()
    expect(first.child.exited?.signal).toBe('SIGKILL')
    await waitFor('the held request to lose its caller', () => (held.callerGone ? true : undefined), 5000, 10)
    // Killed mid-request: nothing recorded, the claim still holds the event until its lease runs out.
    const [orphan] = await eventRow(owner.tenantId)
    expect(orphan).toMatchObject({ attempts: 0, claimed: true, lease_running: true, delivered: false })

    // The lease runs out: it lasts the delivery time limit + 30 s (40 s here). Ending it now stands for that wait,
    // so the test takes seconds; what is under test is that an expired claim is taken again by another instance.
    await admin.query('update webhook_events set claimed_until = now() where id = $1', [orphan.id])
    await startInstance('svc-2')

    const again = await waitFor('instance 2 to deliver the event', () => receiver.received[1], 20_000, 10)
    await waitFor(
      'the event to be recorded delivered',
      async () => ((await eventRow(owner.tenantId))[0]?.delivered ? true : undefined),
      10_000,
    )
    const webhook = new Webhook(endpoint.secret)
    const headers = (received: Received) => ({
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    })
    expect(webhook.verify(again.body, headers(again))).toMatchObject({
      type: 'sms.message.completed',
      data: { messageId, status: 'SENT', successCount: 1 },
    })
    expect(webhook.verify(held.body, headers(held))).toBeTruthy()
    // The same event twice (at least once): the receiver drops the repeat by its webhook-id.
    expect(again.headers['webhook-id']).toBe(held.headers['webhook-id'])
    expect(again.headers['webhook-id']).toBe(`msg_${orphan.webhook_id.replaceAll('-', '')}`)
    expect(again.body).toBe(held.body)
    expect(receiver.received).toHaveLength(2)
    expect(await eventRow(owner.tenantId)).toMatchObject([
      { id: orphan.id, attempts: 1, claimed: false, delivered: true, given_up_at: null, last_error: null },
    ])
  })
})
