import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { embeddedDataDir, openEmbedded } from '../db/embedded.js'
import { withTenant } from '../db/tenant.js'

// A first start creates the store (initdb) and migrates it: seconds, not milliseconds.
const START_TIMEOUT_MS = 60_000

interface RunningServer {
  address: string
  output: () => string
  stop(): Promise<number | null>
}

/** Runs server.ts as `npm start` would, with DATABASE_URL unset, and waits for its listening line. */
async function startServer(dataDir: string): Promise<RunningServer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      // Empty counts as unset for the service, and keeps a developer's .env from supplying one.
      DATABASE_URL: '',
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      SVC_JWT_SECRET: 'embedded-test-secret-at-least-32-bytes-long',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), START_TIMEOUT_MS)
    const onExit = () => {
      clearTimeout(timer)
      reject(new Error(`server exited early:\n${output}`))
    }
    child.once('exit', onExit)
    child.stdout.on('data', () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (!match?.[1]) return
      clearTimeout(timer)
      child.off('exit', onExit)
      resolve(match[1])
    })
  })
  return {
    address,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const [code] = (await once(child, 'exit')) as [number | null]
      return code
    },
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
