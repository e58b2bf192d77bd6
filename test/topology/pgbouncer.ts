import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { Child, findExecutable, freePort, waitFor } from './processes.js'

/** PgBouncer for the topology suite and the pooler benchmark, as an operator would run it in front of PostgreSQL. */

const START_TIMEOUT_MS = 30_000

/**
 * How many prepared statements PgBouncer keeps per server connection when it tracks them (1.21 and later; its
 * default). A statement it evicts is prepared again on next use, so the figure bounds memory, not correctness.
 */
const MAX_PREPARED_STATEMENTS = 200

/** The first PgBouncer release that tracks protocol-level prepared statements in transaction mode. */
const TRACKS_PREPARED_FROM: readonly [number, number] = [1, 21]

/** A PgBouncer binary and what its release can do. */
export interface PgBouncerBuild {
  executable: string
  /** As it reports itself: `1.24`. */
  release: string
  /** It tracks named statements (>= 1.21): it runs with `max_prepared_statements`, and its clients keep theirs. */
  preparedStatements: boolean
}

/**
 * The PgBouncer to run: the binary `override` names (an operator's newer build), else the one on PATH; null when
 * there is none.
 */
export function findPgBouncer(override?: string): PgBouncerBuild | null {
  const executable = override ? (existsSync(override) ? override : null) : findExecutable('pgbouncer')
  if (!executable) return null
  const output = execFileSync(executable, ['--version'], { encoding: 'utf8' })
  const match = /PgBouncer (\d+)\.(\d+)/.exec(output)
  if (!match) throw new Error(`${executable} --version printed no PgBouncer release: ${output.slice(0, 200)}`)
  const [major, minor] = [Number(match[1]), Number(match[2])]
  const [fromMajor, fromMinor] = TRACKS_PREPARED_FROM
  return {
    executable,
    release: `${major}.${minor}`,
    preparedStatements: major > fromMajor || (major === fromMajor && minor >= fromMinor),
  }
}

/** PgBouncer refuses to run as root; as root it is told to switch to this user, which must own its files. */
function unprivilegedUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim())
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim())
      return { name, uid, gid }
    } catch {
      // try the next one
    }
  }
  throw new Error('running as root and neither a postgres nor a nobody user exists for PgBouncer to switch to')
}

export interface PgBouncerOptions {
  /** A scratch directory it may write into (config, auth file, unix socket). */
  dir: string
  /** The PostgreSQL server (and user) it forwards to. */
  server: URL
  /** The database it serves, under the name `svc`. */
  database: string
  mode: 'transaction' | 'session'
  /** Server connections per user and database. */
  poolSize: number
  /**
   * `server_check_delay`: 0 (the suite) checks a server connection with `select 1` before every transaction, so
   * a server connection that died under a fault is never handed out; undefined keeps PgBouncer's default (30 s),
   * what an operator runs and what the benchmark measures.
   */
  serverCheckDelaySeconds?: number
  /** The build to run (default: pgbouncer on PATH); one that tracks prepared statements runs with them tracked. */
  build?: PgBouncerBuild
}

export interface PgBouncer {
  child: Child
  port: number
  /** The database name clients connect to. */
  database: 'svc'
}

/** Starts PgBouncer on a free loopback port in front of `database` and waits until a query passes through it. */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const { dir, server, database, mode, poolSize, serverCheckDelaySeconds } = options
  const build = options.build ?? findPgBouncer()
  if (!build) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)')
  const home = join(dir, 'pgbouncer')
  const sockets = join(home, 'sockets')
  mkdirSync(sockets, { recursive: true })
  const user = decodeURIComponent(server.username || 'postgres')
  const password = decodeURIComponent(server.password)
  // The clients authenticate to PgBouncer with trust (loopback only); the auth file still has to list them.
  writeFileSync(join(home, 'userlist.txt'), `"${user}" "${password.replace(/"/g, '""')}"\n`)
  const target = [
    `host=${server.hostname.replace(/^\[|\]$/g, '')}`,
    `port=${server.port || 5432}`,
    `dbname=${database}`,
    `user=${user}`,
    ...(password ? [`password=${password}`] : []),
  ].join(' ')
  const runAs = unprivilegedUser()
  const port = await freePort()
  const config = [
    '[databases]',
    `svc = ${target}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir = ${sockets}`,
    'auth_type = trust',
    `auth_file = ${join(home, 'userlist.txt')}`,
    `pool_mode = ${mode}`,
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 200',
    ...(serverCheckDelaySeconds === undefined ? [] : [`server_check_delay = ${serverCheckDelaySeconds}`]),
    ...(build.preparedStatements ? [`max_prepared_statements = ${MAX_PREPARED_STATEMENTS}`] : []),
    ...(runAs ? [`user = ${runAs.name}`] : []),
    '',
  ].join('\n')
  const configPath = join(home, 'pgbouncer.ini')
  writeFileSync(configPath, config)
  if (runAs) {
    chmodSync(dir, 0o755)
    for (const path of [home, sockets, configPath, join(home, 'userlist.txt')]) chownSync(path, runAs.uid, runAs.gid)
  }
  const child = new Child('pgbouncer', build.executable, [configPath])
  await waitFor(
    'PgBouncer to accept a query',
    async () => {
      child.assertRunning()
      const client = new pg.Client({
        connectionString: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/svc`,
        connectionTimeoutMillis: 1000,
      })
      try {
        await client.connect()
        await client.query('select 1')
        return true
      } finally {
        await client.end().catch(() => undefined)
      }
    },
    START_TIMEOUT_MS,
    100,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- pgbouncer ---\n${child.tail()}\n--- config ---\n${config}`)
  })
  // The socket directory must exist and be used (a stray socket would land in /tmp otherwise).
  if (!readdirSync(sockets).some((entry) => entry.startsWith('.s.PGSQL.'))) {
    throw new Error(`PgBouncer made no unix socket in ${sockets}`)
  }
  return { child, port, database: 'svc' }
}
