import type { TestProject } from 'vitest/node'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openPostgres, type DriverMode } from '../../db/database.js'
import { openEmbedded } from '../../db/embedded.js'
import { loadEnv } from '../../lib/env.js'
import { findSecrets, type ScannedEvent } from './secret-scan.js'
import { withDatabase } from './database-url.js'
import { ensureRuntimeLoginRole, runtimeUrl } from './runtime-role.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which backend this run uses; test/support/helper.ts derives `isEmbedded` from it. */
    databaseKind: 'postgres' | 'embedded'
    /** The pg driver every runtime database of the run uses (SVC_DB_DRIVER of the test command; PostgreSQL only). */
    databaseDriver: DriverMode
    /** PostgreSQL: the run's migrated database, as the owner. Embedded: '' (there is no server to connect to). */
    databaseUrl: string
    /** PostgreSQL: the same database as the least-privilege runtime login role (test/support/runtime-role.ts). Embedded: ''. */
    runtimeDatabaseUrl: string
    /** Embedded: a migrated store (an SVC_DATA_DIR) that each test file copies. PostgreSQL: ''. */
    embeddedTemplateDir: string
    /** Embedded: the run's scratch directory, removed at the end. PostgreSQL: ''. */
    embeddedRoot: string
  }
}

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'

/** `SVC_DB_DRIVER=plain npx vitest run --project fast` runs the suite on plain node-postgres; validated as at start. */
const runDriver = (): DriverMode => loadEnv({ SVC_DB_DRIVER: process.env.SVC_DB_DRIVER }).SVC_DB_DRIVER

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

/** True when a Docker engine answers its ping on DOCKER_HOST (unix or tcp) or the default socket. */
async function dockerAnswers(): Promise<boolean> {
  const host = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock'
  const target = host.startsWith('unix://')
    ? { socketPath: host.slice('unix://'.length) }
    : (() => {
        const url = new URL(host.replace(/^tcp:/, 'http:'))
        return { host: url.hostname, port: Number(url.port || 2375) }
      })()
  return new Promise((resolve) => {
    const probe = request({ ...target, path: '/_ping', method: 'GET', timeout: 2000 }, (response) => {
      response.resume()
      resolve(response.statusCode === 200)
    })
    probe.on('timeout', () => probe.destroy())
    probe.on('error', () => resolve(false))
    probe.end()
  })
}

type Backend =
  | { kind: 'postgres'; url: string; source: string; stop?: () => Promise<unknown> }
  | { kind: 'embedded'; source: string }

/**
 * SVC_TEST_FORCE_EMBEDDED=1 forces the embedded store (no probes at all); otherwise TEST_DATABASE_URL, else the
 * local server, else a throwaway testcontainers PostgreSQL when Docker answers, else the embedded store.
 */
async function chooseBackend(): Promise<Backend> {
  if (process.env.SVC_TEST_FORCE_EMBEDDED === '1') return { kind: 'embedded', source: 'SVC_TEST_FORCE_EMBEDDED=1' }
  if (process.env.TEST_DATABASE_URL) {
    return { kind: 'postgres', url: process.env.TEST_DATABASE_URL, source: 'TEST_DATABASE_URL' }
  }
  if (await answers(LOCAL_SERVER)) return { kind: 'postgres', url: LOCAL_SERVER, source: 'local server 127.0.0.1:5432' }
  if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:15-alpine').start()
    return { kind: 'postgres', url: container.getConnectionUri(), source: 'testcontainers', stop: () => container.stop() }
  }
  return { kind: 'embedded', source: 'no PostgreSQL server answered and Docker is not reachable' }
}

/** One fresh database per run, migrated once; every test file builds its own app on it. */
async function setupPostgres(project: TestProject, server: Extract<Backend, { kind: 'postgres' }>) {
  const name = `svc_test_${Date.now()}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()

  const url = withDatabase(server.url, name)
  const driver = runDriver()
  const database = openPostgres(url, 1, { driver })
  await database.migrate()
  await database.close()
  // After the migration, which creates the role it is granted.
  await ensureRuntimeLoginRole(url)
  console.log(`[tests] PostgreSQL from ${server.source}, database ${name}, ${driver} driver`)
  project.provide('databaseKind', 'postgres')
  project.provide('databaseDriver', driver)
  project.provide('databaseUrl', url)
  project.provide('runtimeDatabaseUrl', runtimeUrl(url))
  project.provide('embeddedTemplateDir', '')
  project.provide('embeddedRoot', '')

  return async () => {
    try {
      // Before the database goes: every audit event the run wrote, scanned for what must never be in one.
      await refuseSecretsInAuditEvents(url)
    } finally {
      const cleanup = new pg.Client({ connectionString: server.url })
      await cleanup.connect()
      await cleanup.query(`drop database if exists ${name} with (force)`)
      await cleanup.end()
      await server.stop?.()
    }
  }
}

/**
 * Fails the run when any audit event the suite wrote carries something that looks like a password, code, token,
 * secret or whole phone number (test/support/secret-scan.ts), naming each event.
 */
async function refuseSecretsInAuditEvents(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<ScannedEvent>('select id, type, target_id as "targetId", details from audit_events')
    const found = findSecrets(rows)
    console.log(`[tests] scanned ${rows.length} audit events for secrets: ${found.length === 0 ? 'none' : found.length}`)
    if (found.length > 0) {
      // Vitest prints an error thrown by a global teardown but still exits 0: the exit code is set here too.
      process.exitCode = 1
      throw new Error(`audit events carry secrets:\n${found.join('\n')}`)
    }
  } finally {
    await client.end()
  }
}

/**
 * PGlite lives inside one process, so worker processes cannot share it. The setup migrates one template store;
 * each test file copies it and opens its own (test/support/helper.ts), so files stay independent and may run in parallel.
 */
async function setupEmbedded(project: TestProject, source: string) {
  const root = await mkdtemp(join(tmpdir(), 'svc-test-'))
  const template = join(root, 'template')
  const store = openEmbedded(template)
  await store.migrate()
  await store.close()
  // Inherited by the workers and any process a test spawns: whatever opens the default store (a script run with no
  // DATABASE_URL) lands in the run's scratch directory, never in the repository's ./.data.
  process.env.SVC_DATA_DIR = join(root, 'default-data')
  console.log(`[tests] embedded PGlite store (${source}); template ${template}, one copy per test file`)
  project.provide('databaseKind', 'embedded')
  project.provide('databaseDriver', runDriver())
  project.provide('databaseUrl', '')
  project.provide('runtimeDatabaseUrl', '')
  project.provide('embeddedTemplateDir', template)
  project.provide('embeddedRoot', root)

  return async () => {
    await rm(root, { recursive: true, force: true })
  }
}

export default async function setup(project: TestProject) {
  const backend = await chooseBackend()
  return backend.kind === 'postgres' ? setupPostgres(project, backend) : setupEmbedded(project, backend.source)
}
