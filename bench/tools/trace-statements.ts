/**
 * Prints the SQL statements (and round trips) that one request of each benchmarked endpoint sends to PostgreSQL,
 * from the server log with `log_statement = 'all'` set on a fresh bench database only. For the developer optimising
 * a scenario: every line is one round trip on the request's path.
 *
 *   npx tsx bench/tools/trace-statements.ts        (reads /var/log/postgresql/postgresql-15-main.log, or PG_LOG)
 */
import { sql } from 'kysely'
import { open } from 'node:fs/promises'
import { main } from '../lib/cleanup.js'
import { createBenchDatabase } from '../lib/database.js'
import { bearer } from '../lib/scenario-helpers.js'
import { fillHistory, loginStaff, PASSWORD, seedTenant } from '../lib/seed.js'
import { startService } from '../lib/service.js'
import { randomBytes } from 'node:crypto'

const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log'

async function logSize(): Promise<number> {
  const file = await open(LOG, 'r')
  try {
    return (await file.stat()).size
  } finally {
    await file.close()
  }
}

async function logSince(offset: number): Promise<string> {
  const file = await open(LOG, 'r')
  try {
    const size = (await file.stat()).size
    const buffer = Buffer.alloc(size - offset)
    await file.read(buffer, 0, buffer.length, offset)
    return buffer.toString('utf8')
  } finally {
    await file.close()
  }
}

/** The statements of `database` in a log excerpt: one entry per statement, parameters folded in. */
function statements(text: string, database: string): string[] {
  const out: string[] = []
  let current: string | null = null
  for (const line of text.split('\n')) {
    const mine = line.includes(`@${database} `)
    const match = /(?:LOG|DETAIL):\s+(statement: |execute [^:]*: |parameters: )(.*)$/.exec(line)
    if (mine && match) {
      if (match[1] === 'parameters: ') {
        if (current !== null) out[out.length - 1] = `${current}   -- ${match[2]}`
        continue
      }
      current = match[2]!.replace(/\s+/g, ' ').trim()
      out.push(current)
    } else if (current !== null && /^\s/.test(line) && !/^\S/.test(line) && line.trim() !== '') {
      // continuation of a multi-line statement
      current = `${current} ${line.trim()}`
      out[out.length - 1] = current
    } else if (/^\d{4}-\d\d-\d\d /.test(line)) {
      current = null
    }
  }
  return out
}

await main(async () => {
  const database = await createBenchDatabase()
  await sql.raw(`alter database ${database.name} set log_statement = 'all'`).execute(database.owner)
  const service = await startService({ databaseUrl: database.url, jwtSecret: randomBytes(32).toString('hex'), name: 'service-trace' })
  const tenant = await seedTenant(service.url, database.owner, 4)
  await fillHistory(database.owner, tenant.tenantId, tenant.ownerId, tenant.staff[0]!.id, 1000)
  const [session, other] = await loginStaff(service.url, tenant, 2)
  // Let the pool's connections exist before tracing, so no connection set-up lands in a trace.
  for (let i = 0; i < 3; i++) await fetch(`${service.url}/v1/me`, { headers: bearer(session!.access) }).then((r) => r.arrayBuffer())

  const trace = async (label: string, request: () => Promise<Response>) => {
    await new Promise((resolve) => setTimeout(resolve, 300))
    const offset = await logSize()
    const response = await request()
    await response.arrayBuffer()
    await new Promise((resolve) => setTimeout(resolve, 500))
    const lines = statements(await logSince(offset), database.name)
    console.log(`\n${label} -> ${response.status}: ${lines.length} statements`)
    for (const line of lines) console.log(`  ${line.length > 220 ? `${line.slice(0, 220)} ...` : line}`)
  }

  await trace('GET /v1/me', () => fetch(`${service.url}/v1/me`, { headers: bearer(session!.access) }))
  await trace('POST /v1/login', () =>
    fetch(`${service.url}/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userLoginId: tenant.staff[2]!.loginId, password: PASSWORD, customId: tenant.customId }),
    }),
  )
  await trace('POST /v1/refresh', () =>
    fetch(`${service.url}/v1/refresh`, { method: 'POST', headers: { cookie: `svc_refresh_token=${other!.refresh}` } }),
  )
  await trace('GET /v1/sms/history?page=0&size=20', () => fetch(`${service.url}/v1/sms/history?page=0&size=20`, { headers: bearer(session!.access) }))
  await service.stop()
})
