import type { TestProject } from 'vitest/node'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { openPostgres } from '../db/database.js'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string
  }
}

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** TEST_DATABASE_URL, else the local server, else a throwaway testcontainers PostgreSQL when Docker answers. */
async function chooseServer(): Promise<{ url: string; source: string; stop?: () => Promise<unknown> }> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, source: 'TEST_DATABASE_URL' }
  if (await answers(LOCAL_SERVER)) return { url: LOCAL_SERVER, source: 'local server 127.0.0.1:5432' }
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
  const container = await new PostgreSqlContainer('postgres:15-alpine').start()
  return { url: container.getConnectionUri(), source: 'testcontainers', stop: () => container.stop() }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** One fresh database per run, migrated once; every test file builds its own app on it. */
export default async function setup(project: TestProject) {
  const server = await chooseServer()
  const name = `svc_test_${Date.now()}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()

  const url = withDatabase(server.url, name)
  const database = openPostgres(url, 1)
  await database.migrate()
  await database.close()
  console.log(`[tests] PostgreSQL from ${server.source}, database ${name}`)
  project.provide('databaseUrl', url)

  return async () => {
    const cleanup = new pg.Client({ connectionString: server.url })
    await cleanup.connect()
    await cleanup.query(`drop database if exists ${name} with (force)`)
    await cleanup.end()
    await server.stop?.()
  }
}
