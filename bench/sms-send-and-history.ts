/**
 * Load benchmark (not a test): a 10,000-recipient send, and a history page in a tenant with 100,000 messages,
 * each beside a small baseline measured in the same run. Run: `npx tsx bench/sms-send-and-history.ts`.
 *
 * Needs a PostgreSQL server (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres) on which it may
 * create a database; it creates a fresh one, migrates it, and drops it at the end.
 */
import type { FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import { randomBytes, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { createPool, kyselyOver, openPostgres } from '../db/database.js'
import type { DB, Role } from '../db/schema.js'
import { issueTokenPair } from '../lib/sign-in/tokens.js'
import { loadEnv } from '../lib/env.js'
import { buildService } from '../build.js'
import { fillHistory } from './lib/seed.js'

const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'
const SEND_RUNS = 5
const PAGE_RUNS = 20
const BIG_TENANT_MESSAGES = 100_000
const SMALL_TENANT_MESSAGES = 1_000

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

async function timed(runs: number, run: () => Promise<{ statusCode: number }>, expected: number): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    const response = await run()
    times.push(performance.now() - start)
    if (response.statusCode !== expected) throw new Error(`expected ${expected}, got ${response.statusCode}`)
  }
  return median(times)
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/**
 * A closed pool has only asked its connections to end; forcing the drop right away would kill them mid-goodbye
 * and crash the pool with an unhandled error. Waiting for them to go is enough.
 */
async function dropDatabase(admin: pg.Client, name: string) {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await admin.query(`drop database if exists ${name}`)
      return
    } catch (error) {
      if ((error as { code?: string }).code !== '55006') throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await admin.query(`drop database if exists ${name} with (force)`)
}

async function staff(app: FastifyInstance, owner: Kysely<DB>, tenantId: number, role: Role) {
  const user = await owner
    .insertInto('users')
    .values({ tenantId, userLoginId: `bench-${randomUUID()}`, passwordHash: 'x', name: 'Bench', role, avatarSeed: 's', updatedAt: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  const { access } = await issueTokenPair(
    app.tokenKeys,
    { userId: user.id, tenantId, tenantSlug: `bench-${tenantId}`, role, sid: randomUUID() },
    { accessSeconds: 3600, refreshSeconds: 7200 },
  )
  return { id: user.id, headers: { authorization: `Bearer ${access.token}` } }
}

async function tenant(owner: Kysely<DB>) {
  const slug = `bench-${randomBytes(4).toString('hex')}`
  const row = await owner
    .insertInto('tenants')
    .values({ slug, customId: slug.slice(6).toUpperCase(), name: slug, status: 'ACTIVE', updatedAt: new Date() })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

async function main() {
  const base = loadEnv({ ...process.env, LOG_LEVEL: 'silent' })
  const server = base.DATABASE_URL ?? DEFAULT_SERVER
  const name = `svc_bench_${Date.now()}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`create database ${name}`)
  const url = withDatabase(server, name)

  let app: FastifyInstance | undefined
  const owner = kyselyOver(createPool(url, 2))
  try {
    await openPostgres(url, 1).migrate()
    const env = loadEnv({
      DATABASE_URL: url,
      LOG_LEVEL: 'silent',
      SVC_JWT_SECRET: randomBytes(32).toString('hex'),
      SVC_MIGRATE_ON_START: 'false',
      SVC_DB_POOL_MAX: '10',
      // Only the request path is measured; nothing here is due anyway.
      SVC_SMS_DISPATCHER: 'off',
    })
    app = await buildService(env, openPostgres(url, env.SVC_DB_POOL_MAX))
    const rows: [string, number][] = []

    // Sends: scheduled a day ahead so no dispatch competes with the measurement.
    const sendTenant = await tenant(owner)
    const sender = await staff(app, owner, sendTenant, 'OWNER')
    const scheduledAt = new Date(Date.now() + 86_400_000).toISOString()
    const sendWith = (count: number) => () =>
      app!.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...sender.headers, 'idempotency-key': randomUUID() },
        payload: {
          title: 'Bench',
          content: 'Hello {name}, see you in class {className}.',
          scheduledAt,
          recipients: Array.from({ length: count }, (_, i) => ({
            phone: `010-${String(10_000_000 + i).slice(0, 4)}-${String(10_000_000 + i).slice(4)}`,
            name: `Student ${i}`,
            className: 'Math A',
            recipientRole: 'GUARDIAN',
          })),
        },
      })
    await sendWith(10)()
    rows.push(['send, 1 recipient (baseline)', await timed(SEND_RUNS, sendWith(1), 201)])
    rows.push(['send, 10,000 recipients', await timed(SEND_RUNS, sendWith(10_000), 201)])

    // History: a small tenant as the baseline, and one with 100,000 messages.
    const history = async (messages: number) => {
      const id = await tenant(owner)
      const boss = await staff(app!, owner, id, 'OWNER')
      const instructor = await staff(app!, owner, id, 'INSTRUCTOR')
      const start = performance.now()
      await fillHistory(owner, id, boss.id, instructor.id, messages)
      const fillMs = performance.now() - start
      return { boss, instructor, fillMs }
    }
    const small = await history(SMALL_TENANT_MESSAGES)
    const big = await history(BIG_TENANT_MESSAGES)
    // Autovacuum would have analysed a table this size long before anyone pages through it.
    await sql`vacuum analyze sms_messages`.execute(owner)
    const page = (who: { headers: Record<string, string> }, query: string) => () =>
      app!.inject({ method: 'GET', url: `/v1/sms/history${query}`, headers: who.headers })
    const pages: [string, string, 'boss' | 'instructor'][] = [
      ['first page (createdAt,desc)', '', 'boss'],
      ['filtered page (status=SENT, q=exam)', '?status=SENT&q=exam', 'boss'],
      ['instructor: own messages only', '', 'instructor'],
      ['sort=sentAt,desc', '?sort=sentAt,desc', 'boss'],
      ['sort=status,asc', '?sort=status,asc', 'boss'],
      ['page 200 of 20 (offset 4,000)', '?page=200', 'boss'],
    ]
    for (const [label, query, who] of pages) {
      await page(small[who], query)()
      rows.push([`history ${label}, ${SMALL_TENANT_MESSAGES.toLocaleString('en')} msgs (baseline)`, await timed(PAGE_RUNS, page(small[who], query), 200)])
      await page(big[who], query)()
      rows.push([`history ${label}, ${BIG_TENANT_MESSAGES.toLocaleString('en')} msgs`, await timed(PAGE_RUNS, page(big[who], query), 200)])
    }

    const width = Math.max(...rows.map(([label]) => label.length))
    console.log(`\nSMS send and history (median; sends of ${SEND_RUNS} runs, pages of ${PAGE_RUNS}), via app.inject`)
    console.log(`${'case'.padEnd(width)}  median ms`)
    for (const [label, ms] of rows) console.log(`${label.padEnd(width)}  ${ms.toFixed(1).padStart(9)}`)
    console.log(`(filled ${BIG_TENANT_MESSAGES.toLocaleString('en')} history rows in ${(big.fillMs / 1000).toFixed(1)} s)`)
  } finally {
    await app?.close()
    await owner.destroy()
    await dropDatabase(admin, name)
    await admin.end()
  }
}

await main()
