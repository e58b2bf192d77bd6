import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { startFakeExtSms, type FakeExtSms } from '../support/fakes/extsms-server.js'
import { findPgBouncer, startPgBouncer, type PgBouncerBuild } from './pgbouncer.js'
import { Child, findExecutable, freePort, waitFor } from './processes.js'
import { startSlowLink, type SlowLink } from './slow-link.js'

/**
 * The deployment the topology suite runs against, every part on 127.0.0.1:
 *
 *   client -> HAProxy (round robin, http) -> service instance 1 | 2 -> PgBouncer (transaction pooling) -> PostgreSQL
 *                                              \-> slow link 1 | 2 -> fake provider
 *
 * The database is the suite's own, migrated by `scripts/migrate.ts` as the owner straight on the server; the
 * instances reach it only through PgBouncer (DATABASE_URL), with DATABASE_MIGRATION_URL naming the server itself.
 * The runtime URL names the same superuser as the migration: what a default deployment does (DATABASE_MIGRATION_URL
 * defaults to DATABASE_URL), and the case where a server connection that missed the switch to the runtime role
 * bypasses row-level security, which the cross-tenant probe would see.
 */

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'
const START_TIMEOUT_MS = 30_000

export const JWT_SECRET = 'topology-jwt-secret-at-least-32-bytes-long!'
export const HMAC_SECRET = 'topology-internal-hmac-secret-0123456789'
export const WEBHOOK_TOKEN = 'topology-webhook-token'
const PROVIDER_KEY = 'topology-key'
const PROVIDER_SECRET = 'topology-secret'

/** The server the suite creates its database on: TEST_DATABASE_URL, else the local one. */
export function serverUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_SERVER
}

/**
 * PgBouncer's pool mode: `transaction` (what the suite is for) unless TOPOLOGY_POOL_MODE=session, which gives every
 * client connection a server connection of its own: a run in both modes tells a transaction-pooling problem from
 * any other.
 */
export function poolMode(): 'transaction' | 'session' {
  const mode = process.env.TOPOLOGY_POOL_MODE || 'transaction'
  if (mode !== 'transaction' && mode !== 'session') throw new Error(`TOPOLOGY_POOL_MODE must be transaction or session, got ${mode}`)
  return mode
}

/**
 * The PgBouncer the suite runs: TOPOLOGY_PGBOUNCER names a binary (a release newer than Debian's, say), else the
 * one on PATH. A release that tracks prepared statements (>= 1.21) runs with `max_prepared_statements` and the
 * instances with SVC_DB_PREPARED_STATEMENTS=true, as docs/operations.md#deploying-poolers-roles-several-instances tells an
 * operator; an older one with them off. Looked up once: the answer cannot change during a run.
 */
export function chosenPgBouncer(): PgBouncerBuild | null {
  if (chosen === undefined) chosen = findPgBouncer(process.env.TOPOLOGY_PGBOUNCER)
  return chosen
}
let chosen: PgBouncerBuild | null | undefined

/** Why the suite cannot run here, or null when it can. Checked before anything starts. */
export async function missingPrerequisite(): Promise<string | null> {
  if (process.env.TOPOLOGY_PGBOUNCER && !chosenPgBouncer()) return `TOPOLOGY_PGBOUNCER names no file: ${process.env.TOPOLOGY_PGBOUNCER}`
  for (const tool of ['pgbouncer', 'haproxy']) {
    if (tool === 'pgbouncer' ? !chosenPgBouncer() : !findExecutable(tool)) return `${tool} is not installed (apt-get install -y pgbouncer haproxy)`
  }
  const client = new pg.Client({ connectionString: serverUrl(), connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    return `no PostgreSQL server answers at ${redact(serverUrl())}: ${(error as Error).message}`
  } finally {
    await client.end().catch(() => undefined)
  }
  return null
}

function redact(url: string): string {
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return parsed.toString()
}

export interface Instance {
  name: string
  /** http://127.0.0.1:port, straight to this instance (bypassing HAProxy). */
  url: string
  child: Child
  /** The instance's own link to the fake provider: what it handed to the provider. */
  link: SlowLink
}

export interface Stack {
  /** HAProxy's address: every request of the suite goes here unless it must reach one instance. */
  url: string
  instances: Instance[]
  fake: FakeExtSms
  /** The owner's connection straight to the suite's database (bypasses RLS): assertions only. */
  owner: pg.Pool
  /** The health check HAProxy uses. */
  healthPath: string
  /** Starts one more instance behind PgBouncer, outside HAProxy, with these settings on top; stopped by close(). */
  addInstance(name: string, overrides: Record<string, string>): Promise<Instance>
  /** The output of every process, for a failure message. */
  diagnostics(): string
  close(): Promise<void>
}

/** Starts the whole stack; on any failure stops what was started and rethrows. */
export async function startStack(): Promise<Stack> {
  const cleanups: (() => Promise<void> | void)[] = []
  const children: Child[] = []
  const closeAll = async () => {
    const errors: unknown[] = []
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup()
      } catch (error) {
        errors.push(error)
      }
    }
    cleanups.length = 0
    if (errors.length > 0) throw new AggregateError(errors, 'topology stack: cleanup failed')
  }
  const diagnostics = () =>
    children.map((child) => `--- ${child.name} (pid ${child.pid}) ---\n${child.tail(12, 400)}`).join('\n')

  try {
    const dir = mkdtempSync(join(tmpdir(), 'svc-topology-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))

    const server = new URL(serverUrl())
    const database = `svc_topo_${Date.now()}_${randomBytes(3).toString('hex')}`
    await adminQuery(`create database ${database}`)
    cleanups.push(() => adminQuery(`drop database if exists ${database} with (force)`))
    const directUrl = withDatabase(server, database)

    const migrate = new Child('migrate', process.execPath, ['--import', 'tsx', 'scripts/migrate.ts'], {
      cwd: REPO_ROOT,
      env: serviceEnv({ DATABASE_URL: directUrl, DATABASE_MIGRATION_URL: directUrl, LOG_LEVEL: 'warn', SVC_SMS_PROVIDER: 'mock' }),
    })
    children.push(migrate)
    await waitFor('the migration to finish', () => (migrate.exited ? true : undefined), START_TIMEOUT_MS)
    if (migrate.exited?.code !== 0) throw new Error(`migration failed:\n${migrate.tail()}`)

    const owner = new pg.Pool({ connectionString: directUrl, max: 3, types: int8AsNumber })
    cleanups.push(() => owner.end())

    // Transaction mode: fewer server connections than the instances' pools hold client connections (2 x 5), so every
    // server connection serves transactions of many client connections, as in production. Session mode needs one
    // per client connection.
    const mode = poolMode()
    const build = chosenPgBouncer()!
    const bouncer = await startPgBouncer({
      dir,
      server,
      database,
      mode,
      poolSize: mode === 'transaction' ? 4 : 20,
      serverCheckDelaySeconds: 0,
      build,
    })
    children.push(bouncer.child)
    cleanups.push(() => bouncer.child.stop('SIGINT'))

    const fake = await startFakeExtSms({ apiKey: PROVIDER_KEY, apiSecret: PROVIDER_SECRET })
    cleanups.push(() => fake.close())

    const spawnInstance = async (name: string, overrides: Record<string, string> = {}): Promise<Instance> => {
      const link = await startSlowLink(fake.url)
      cleanups.push(() => link.close())
      const port = await freePort()
      const child = new Child(name, process.execPath, ['--import', 'tsx', 'server.ts'], {
        cwd: REPO_ROOT,
        env: serviceEnv({
          PORT: String(port),
          DATABASE_URL: withDatabase(new URL(`postgres://${server.username}@127.0.0.1:${bouncer.port}`), 'svc'),
          DATABASE_MIGRATION_URL: directUrl,
          SVC_MIGRATE_ON_START: 'false',
          SVC_SMS_EXTSMS_BASE_URL: link.url,
          SVC_DATA_DIR: join(dir, name),
          SVC_DB_PREPARED_STATEMENTS: String(build.preparedStatements),
          ...overrides,
        }),
      })
      children.push(child)
      cleanups.push(() => child.stop('SIGTERM', 5000))
      return { name, url: `http://127.0.0.1:${port}`, child, link }
    }
    const instances: Instance[] = []
    for (const name of ['svc-1', 'svc-2']) instances.push(await spawnInstance(name))
    // Started together, awaited together: the two start-ups overlap.
    for (const instance of instances) await waitForHealth(instance)

    const healthPath = await chooseHealthPath(instances[0]!.url)
    const proxy = await startHaProxy(dir, instances, healthPath)
    children.push(proxy.child)
    cleanups.push(() => proxy.child.stop('SIGTERM'))
    await waitForBothBackends(proxy.url, proxy.child)

    const addInstance = async (name: string, overrides: Record<string, string>) => {
      const instance = await spawnInstance(name, overrides)
      await waitForHealth(instance)
      return instance
    }
    return { url: proxy.url, instances, fake, owner, healthPath, addInstance, diagnostics, close: closeAll }
  } catch (error) {
    const output = diagnostics()
    await closeAll().catch(() => undefined)
    throw new Error(`topology stack did not start: ${(error as Error).message}\n${output}`)
  }
}

// Ids and counts arrive as numbers, as the service reads them (every one stays far below 2^53).
const int8AsNumber: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
}

/** One statement as the server's superuser (create and drop the stack's databases). */
export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl() })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

export function withDatabase(server: URL, database: string): string {
  const url = new URL(server.toString())
  url.pathname = `/${database}`
  return url.toString()
}

/** The parent's environment less anything the service reads: a developer's DATABASE_URL or NODE_ENV must not leak in. */
export function parentEnvForService(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(SVC_|DATABASE_|NODE_ENV$|PORT$|HOST$|LOG_LEVEL$)/.test(key)) continue
    env[key] = value
  }
  return env
}

/**
 * The instances' environment: the parent's, less anything the service reads (a developer's DATABASE_URL or a test
 * run's NODE_ENV must not leak in), plus a production configuration for this stack.
 */
function serviceEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...parentEnvForService(),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    // Warnings and errors only: a 5xx is logged at error level, and request lines would flood the pipes.
    LOG_LEVEL: 'warn',
    SVC_JWT_SECRET: JWT_SECRET,
    SVC_BCRYPT_COST: '4',
    // Every request reaches the instances from HAProxy's one address.
    SVC_LOGIN_IP_PER_MINUTE: '1000000',
    SVC_INTERNAL_HMAC_SECRET: HMAC_SECRET,
    SVC_DB_POOL_MAX: '5',
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: PROVIDER_KEY,
    SVC_SMS_EXTSMS_API_SECRET: PROVIDER_SECRET,
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: WEBHOOK_TOKEN,
    SVC_SMS_DISPATCHER: 'on',
    SVC_SMS_LEASE_SECONDS: '5',
    // A provider call may start only while the lease outlasts it by a second (the dispatcher refuses to start
    // otherwise); 2 s leaves the heartbeat slack on a loaded machine and far exceeds the links' 300 ms.
    SVC_SMS_PROVIDER_TIMEOUT_MS: '2000',
    SVC_SMS_SCHEDULER_CRON: '* * * * * *',
    SVC_SMS_RETRY_BASE_SECONDS: '1',
    ...overrides,
  }
}


async function waitForHealth(instance: Instance): Promise<void> {
  await waitFor(
    `${instance.name} to answer ${instance.url}/actuator/health`,
    async () => {
      instance.child.assertRunning()
      const response = await fetch(`${instance.url}/actuator/health`, { signal: AbortSignal.timeout(1000) })
      await response.arrayBuffer()
      return response.status === 200 ? true : undefined
    },
    START_TIMEOUT_MS,
    100,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- ${instance.name} ---\n${instance.child.tail()}`)
  })
}

/** `/actuator/health/liveness` when the service has it, else `/actuator/health`. */
async function chooseHealthPath(instanceUrl: string): Promise<string> {
  const response = await fetch(`${instanceUrl}/actuator/health/liveness`, { signal: AbortSignal.timeout(2000) })
  await response.arrayBuffer()
  return response.status === 200 ? '/actuator/health/liveness' : '/actuator/health'
}

async function startHaProxy(dir: string, instances: Instance[], healthPath: string): Promise<{ child: Child; url: string }> {
  const port = await freePort()
  const config = [
    'global',
    '  maxconn 2000',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    // Generous: a loaded two-core machine must not make HAProxy take an instance out in the middle of a test.
    '  timeout check 2s',
    // A killed instance refuses connections before its health check notices: send the request elsewhere.
    '  retries 2',
    '  option redispatch 1',
    '',
    'frontend svc',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    '',
    'backend instances',
    '  balance roundrobin',
    `  option httpchk GET ${healthPath}`,
    '  http-check expect status 200',
    '  default-server inter 300ms fall 3 rise 1',
    // Which instance answered, so the suite can show that requests spread over both.
    '  http-response set-header X-Served-By %[srv_name]',
    ...instances.map((instance) => `  server ${instance.name} ${new URL(instance.url).host} check`),
    '',
  ].join('\n')
  const configPath = join(dir, 'haproxy.cfg')
  writeFileSync(configPath, config)
  const haproxy = findExecutable('haproxy')!
  try {
    execFileSync(haproxy, ['-c', '-q', '-f', configPath], { stdio: 'pipe' })
  } catch (error) {
    throw new Error(`HAProxy refused its configuration: ${String((error as { stderr?: Buffer }).stderr ?? error)}\n${config}`)
  }
  // -db: stay in the foreground, so the harness owns the process and kills it.
  const child = new Child('haproxy', haproxy, ['-db', '-f', configPath])
  return { child, url: `http://127.0.0.1:${port}` }
}

/** Until HAProxy has both instances up: answers from each seen through it. */
async function waitForBothBackends(url: string, haproxy: Child): Promise<void> {
  const seen = new Set<string>()
  await waitFor(
    'HAProxy to route to both instances',
    async () => {
      haproxy.assertRunning()
      const response = await fetch(`${url}/actuator/health`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      const server = response.headers.get('x-served-by')
      if (response.status === 200 && server) seen.add(server)
      return seen.size >= 2 ? true : undefined
    },
    START_TIMEOUT_MS,
    50,
  )
}
