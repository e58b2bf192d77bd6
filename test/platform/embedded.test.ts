import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddedDataDir, openEmbedded } from '../../db/embedded.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { checkDigit } from '../../lib/tenancy/business-number.js'
import { listeningAddress, startScriptSource } from '../support/child-processes.js'

// A first start creates the store (initdb) and migrates it: seconds, not milliseconds.
const START_TIMEOUT_MS = 60_000

interface RunningServer {
  address: string
  output: () => string
  stop(): Promise<number | null>
}

/** Runs server.ts as `npm start` would, with DATABASE_URL unset, and waits for its listening line. */
async function startServer(dataDir: string, overrides: Record<string, string> = {}): Promise<RunningServer> {
  const server = startScriptSource('server.ts', [], {
    ...process.env,
    NODE_ENV: 'test',
    // Empty counts as unset for the service, and keeps a developer's .env from supplying one.
    DATABASE_URL: '',
    SVC_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    SVC_JWT_SECRET: 'embedded-test-secret-at-least-32-bytes-long',
    ...overrides,
  })
  const address = await listeningAddress(server, START_TIMEOUT_MS)
  const { child } = server
  return {
    address,
    output: server.output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const [code] = (await once(child, 'exit')) as [number | null]
      return code
    },
  }
}

/** A valid business registration number (its check digit computed), different on every call. */
function businessNumber(): string {
  const first9 = `1${String(randomBytes(4).readUInt32BE() % 1e8).padStart(8, '0')}`
  return `${first9}${checkDigit(first9)}`
}

/** A client as a browser-less caller would be: JSON over real HTTP, cookies read from `set-cookie`. */
function client(address: string) {
  return async (method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${address}${path}`, {
      method,
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    })
    const text = await response.text()
    const cookies = Object.fromEntries(
      response.headers.getSetCookie().map((line) => {
        const [pair = ''] = line.split(';')
        const at = pair.indexOf('=')
        return [pair.slice(0, at), pair.slice(at + 1)]
      }),
    )
    return { status: response.status, headers: response.headers, cookies, body: text === '' ? undefined : JSON.parse(text) }
  }
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('embedded store (DATABASE_URL unset)', () => {
  let dataDir: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-embedded-'))
  })
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true })
  })

  it(
    'serves, says it is for development, and keeps its data across a restart with RLS in force',
    async () => {
      const first = await startServer(dataDir)
      try {
        expect((await fetch(`${first.address}/actuator/health`)).status).toBe(200)
        expect(first.output()).toContain(
          `embedded PGlite store under ${embeddedDataDir(dataDir)}: for development only; set DATABASE_URL for PostgreSQL`,
        )
      } finally {
        expect(await first.stop()).toBe(0)
      }

      // Between runs, as an operator would: write through the owner while no server holds the store.
      const slug = `persist-${Date.now().toString(36)}`
      const between = openEmbedded(dataDir)
      try {
        await between.owner
          .insertInto('tenants')
          .values({ slug, customId: slug.slice(-10).toUpperCase(), name: 'Persisted', updatedAt: new Date() })
          .execute()
      } finally {
        await between.close()
      }

      const second = await startServer(dataDir)
      try {
        const health = await fetch(`${second.address}/actuator/health`)
        expect(health.status).toBe(200)
        expect(await health.json()).toEqual({ status: 'UP' })
      } finally {
        expect(await second.stop()).toBe(0)
      }

      const store = openEmbedded(dataDir)
      try {
        const migrations = await sql<{ name: string }>`select name from kysely_migration`.execute(store.owner)
        expect(migrations.rows.length).toBeGreaterThan(0)
        const persisted = await store.owner.selectFrom('tenants').select('name').where('slug', '=', slug).executeTakeFirst()
        expect(persisted).toEqual({ name: 'Persisted' })

        const [a, b] = await store.owner
          .insertInto('tenants')
          .values([
            { slug: `${slug}-a`, customId: `A${Date.now() % 1e9}`, name: 'A', updatedAt: new Date() },
            { slug: `${slug}-b`, customId: `B${Date.now() % 1e9}`, name: 'B', updatedAt: new Date() },
          ])
          .returning('id')
          .execute()
        const user = (tenantId: number, login: string) => ({
          tenantId,
          userLoginId: login,
          passwordHash: 'x',
          name: login,
          role: 'STUDENT' as const,
          avatarSeed: login,
          updatedAt: new Date(),
        })
        const users = await store.owner
          .insertInto('users')
          .values([user(a!.id, 'user-a'), user(b!.id, 'user-b')])
          .returning(['id', 'tenantId'])
          .execute()
        const ids = users.map((row) => row.id)

        const seenByA = await withTenant(store.db, a!.id, (trx) => trx.selectFrom('users').select('tenantId').where('id', 'in', ids).execute())
        expect(seenByA).toEqual([{ tenantId: a!.id }])
        const hijacked = await withTenant(store.db, a!.id, (trx) =>
          trx.updateTable('users').set({ name: 'hijacked' }).where('tenantId', '=', b!.id).executeTakeFirst(),
        )
        expect(hijacked.numUpdatedRows).toBe(0n)
        expect(await store.db.selectFrom('users').select('id').where('id', 'in', ids).execute()).toEqual([])

        const role = await sql<{ role: string; superuser: boolean; bypassrls: boolean }>`
          select current_user as role, rolsuper as superuser, rolbypassrls as bypassrls
          from pg_roles where rolname = current_user`.execute(store.db)
        expect(role.rows).toEqual([{ role: 'svc_app', superuser: false, bypassrls: false }])
      } finally {
        await store.close()
      }
    },
    4 * START_TIMEOUT_MS,
  )

  it(
    'serves the whole flow over HTTP: register, login, me, a mock-provider send to SENT, and tenant isolation',
    async () => {
      const flowDir = join(dataDir, 'flow')
      // Bcrypt at its cheapest; everything else (the dispatcher included) at its defaults.
      const server = await startServer(flowDir, { SVC_BCRYPT_COST: '4' })
      const call = client(server.address)
      const password = 'Flow-Pass-2026'
      const owners = [`flow-a-${randomBytes(3).toString('hex')}`, `flow-b-${randomBytes(3).toString('hex')}`]
      let messageId: number
      let tenantIds: number[]
      try {
        for (const [index, userLoginId] of owners.entries()) {
          const registered = await call('POST', '/v1/register/owner', {
            body: { instituteName: `Flow Academy ${index}`, businessRegistrationNumber: businessNumber(), userLoginId, password, name: 'Flow Owner' },
          })
          expect(registered.status).toBe(201)
          expect(registered.body.user).toMatchObject({ userLoginId, role: 'OWNER' })
        }

        // Root entry (no customId): the owner directory finds the tenant.
        const signIn = async (userLoginId: string) => {
          const login = await call('POST', '/v1/login', { body: { userLoginId, password } })
          expect(login.status).toBe(200)
          expect(login.cookies.svc_access_token).toBeTruthy()
          expect(login.cookies.svc_refresh_token).toBeTruthy()
          return login.cookies.svc_access_token!
        }
        const [tokenA, tokenB] = [await signIn(owners[0]!), await signIn(owners[1]!)]
        const bearerA = { authorization: `Bearer ${tokenA}` }
        const bearerB = { authorization: `Bearer ${tokenB}` }

        const meA = await call('GET', '/v1/me', { headers: bearerA })
        expect(meA.status).toBe(200)
        expect(meA.body).toMatchObject({ userLoginId: owners[0], role: 'OWNER' })
        const meB = await call('GET', '/v1/me', { headers: { cookie: `svc_access_token=${tokenB}` } })
        expect(meB.status).toBe(200)
        expect(meB.body.tenantId).not.toBe(meA.body.tenantId)
        tenantIds = [meA.body.tenantId, meB.body.tenantId]

        const send = {
          body: { title: 'Notice', content: 'Hello {name}', recipients: [{ phone: '010-1234-5678', name: 'Kim' }, { phone: '01098765432', name: 'Lee' }] },
          headers: { ...bearerA, 'idempotency-key': randomUUID() },
        }
        const sent = await call('POST', '/v1/sms/send', send)
        expect(sent.status).toBe(201)
        expect(sent.body).toMatchObject({ status: 'PENDING', recipientCount: 2 })
        messageId = sent.body.id
        const replayed = await call('POST', '/v1/sms/send', send)
        expect(replayed.status).toBe(201)
        expect(replayed.headers.get('idempotent-replayed')).toBe('true')
        expect(replayed.body.id).toBe(messageId)

        // The dispatcher (on by default) hands it to the mock provider, whose reports settle it.
        const detail = await until(
          () => call('GET', `/v1/sms/history/${messageId}`, { headers: bearerA }),
          (read) => read.body?.status === 'SENT',
        )
        expect(detail.status).toBe(200)
        expect(detail.body).toMatchObject({ id: messageId, status: 'SENT', successCount: 2, failCount: 0 })
        expect(detail.body.recipients.map((recipient: { deliveryStatus: string }) => recipient.deliveryStatus)).toEqual(['DELIVERED', 'DELIVERED'])

        const foreign = await call('GET', `/v1/sms/history/${messageId}`, { headers: bearerB })
        expect(foreign.status).toBe(404)
        expect(foreign.body.code).toBe('SMS_NOT_FOUND')
        const foreignHistory = await call('GET', '/v1/sms/history', { headers: bearerB })
        expect(foreignHistory.body).toMatchObject({ total: 0, items: [] })
      } finally {
        expect(await server.stop()).toBe(0)
      }

      // The same rows through the store's handles once the server has let go of it.
      const store = openEmbedded(flowDir)
      try {
        const [tenantA, tenantB] = tenantIds
        const row = await store.owner.selectFrom('smsMessages').select(['tenantId', 'status']).where('id', '=', messageId).executeTakeFirst()
        expect(row).toEqual({ tenantId: tenantA, status: 'SENT' })
        const read = (tenantId: number) =>
          withTenant(store.db, tenantId, (trx) => trx.selectFrom('smsMessages').select('id').where('id', '=', messageId).execute())
        expect(await read(tenantA!)).toEqual([{ id: messageId }])
        expect(await read(tenantB!)).toEqual([])
        expect(await store.db.selectFrom('smsMessages').select('id').execute()).toEqual([])
      } finally {
        await store.close()
      }
    },
    3 * START_TIMEOUT_MS,
  )

  it('runs as the runtime role before any migration, so an unmigrated store fails closed', async () => {
    const fresh = openEmbedded(join(dataDir, 'unmigrated'))
    try {
      const role = await sql<{ role: string }>`select current_user as role`.execute(fresh.db)
      expect(role.rows).toEqual([{ role: 'svc_app' }])
      await expect(fresh.db.selectFrom('tenants').select('id').execute()).rejects.toThrow(/does not exist/)
      await fresh.migrate()
      expect((await sql<{ role: string }>`select current_user as role`.execute(fresh.db)).rows).toEqual([{ role: 'svc_app' }])
      // Migrations ran as the owner; the session is back to a role that cannot change the schema.
      await expect(sql`create table intruder (id int)`.execute(fresh.db)).rejects.toThrow(/permission denied/)
    } finally {
      await fresh.close()
    }
  }, START_TIMEOUT_MS)
})
