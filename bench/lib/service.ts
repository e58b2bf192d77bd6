import { execFile, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { onCleanup, spawnTracked, stopChild } from './cleanup.js'
import { benchConfig } from './config.js'

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const run = promisify(execFile)

/** `--import` value that lets Node run the harness's TypeScript files from any working directory. */
export const TSX_IMPORT = import.meta.resolve('tsx')

/** Loopback only: the harness never sends load anywhere else. */
export const HOST = '127.0.0.1'

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolvePort(port))
    })
  })
}

let build: Promise<string> | null = null

export interface BuildInfo {
  commit: string
  /** Service files that differed from the commit when the build ran. */
  uncommitted: string[]
}

let buildInfo: BuildInfo | null = null

/** What the measured build contained (recorded when it was built); null before any build. */
export function measuredBuild(): BuildInfo | null {
  return buildInfo
}

async function git(...args: string[]): Promise<string> {
  try {
    return (await run('git', args, { cwd: REPO_ROOT })).stdout.trim()
  } catch {
    return 'unknown'
  }
}

/** Service files of the working tree that differ from HEAD (what a build of the working tree adds to the commit). */
export async function uncommittedServiceFiles(): Promise<string[]> {
  const status = await git('status', '--porcelain', '--', 'app.ts', 'build.ts', 'server.ts', 'plugins', 'routes', 'lib', 'db')
  return status === '' || status === 'unknown' ? [] : status.split('\n').map((line) => line.slice(3))
}

/**
 * A private copy of a build's dist/ under bench/.build/, removed when the run ends. The copy sits inside the
 * repository so that bare imports still resolve to its node_modules.
 */
export async function snapshotBuild(dist: string, label: string): Promise<string> {
  const snapshot = join(REPO_ROOT, 'bench', '.build', `dist-${label}-${process.pid}-${randomBytes(3).toString('hex')}`)
  await mkdir(dirname(snapshot), { recursive: true })
  await cp(dist, snapshot, { recursive: true })
  onCleanup('remove build snapshot', () => rm(snapshot, { recursive: true, force: true }))
  return snapshot
}

/**
 * `npm run build`, then a private copy of dist/: other developers rebuild dist/ while a long run is going, and
 * every instance of this run must execute the same code.
 */
export function serviceBuild(): Promise<string> {
  build ??= (async () => {
    const started = Date.now()
    process.stderr.write('building the service (npm run build) ... ')
    buildInfo = { commit: await git('rev-parse', '--short', 'HEAD'), uncommitted: await uncommittedServiceFiles() }
    await run('npm', ['run', '-s', 'build'], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 })
    const snapshot = await snapshotBuild(join(REPO_ROOT, 'dist'), 'working-tree')
    process.stderr.write(`done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
    return snapshot
  })()
  return build
}

/** Production settings shared by every instance; scenarios add or override what they need. */
export function productionEnv(databaseUrl: string, jwtSecret: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    SVC_JWT_SECRET: jwtSecret,
    SVC_DB_POOL_MAX: String(benchConfig.poolMax),
    SVC_BCRYPT_COST: '10',
    LOG_LEVEL: 'warn',
    HOST,
    // The load comes from one address; the per-address login budget and the lockout would refuse it.
    SVC_LOGIN_IP_PER_MINUTE: '1000000',
    SVC_LOGIN_MAX_FAILURES: '1000',
    // Load tests send far more recipients than a tenant's daily quota allows (the quota has its own tests).
    SVC_SMS_TENANT_DAILY_RECIPIENTS: '0',
    // Plain-HTTP clients on loopback; the attribute does not change the work done.
    SVC_COOKIE_SECURE: 'false',
    // A production deployment has one; without it the service warns at start.
    SVC_INTERNAL_HMAC_SECRET: randomBytes(24).toString('hex'),
  }
}

export interface RunningProcess {
  name: string
  pid: number
  url: string
  child: ChildProcess
  /** Resident set size in KiB, from /proc/<pid>/status. */
  rssKiB(): Promise<number>
  /** Lines the process wrote (stdout and stderr), most recent last. */
  log(): string[]
  stop(): Promise<void>
}

export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
  if (!match) throw new Error(`no VmRSS for process ${pid}`)
  return Number(match[1])
}

const MAX_LOG_LINES = 200

export async function waitForHttp(url: string, child: ChildProcess, name: string, log: () => string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it answered:\n${log().join('\n')}`)
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100))
  }
  throw new Error(`${name} did not answer ${url} within ${timeoutMs} ms:\n${log().join('\n')}`)
}

export interface StartOptions {
  name: string
  /** Node script to run and its arguments. */
  script: string
  args?: string[]
  nodeOptions?: string[]
  env: Record<string, string>
  /** Path polled until it answers 2xx. */
  healthPath: string
  port?: number
}

/** Starts a Node program listening on a free loopback port and waits until it answers its health path. */
export async function startProcess(options: StartOptions): Promise<RunningProcess> {
  const port = options.port ?? (await freePort())
  // A private working directory: no stray .env of a developer is read.
  const cwd = await mkdtemp(join(tmpdir(), 'svc-bench-'))
  const child = spawnTracked(process.execPath, [...(options.nodeOptions ?? []), options.script, ...(options.args ?? [])], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? cwd, ...options.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue
      lines.push(line)
      if (lines.length > MAX_LOG_LINES) lines.shift()
    }
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const url = `http://${HOST}:${port}`
  const removeCleanup = onCleanup(`stop ${options.name}`, async () => {
    await stopChild(child)
    await rm(cwd, { recursive: true, force: true })
  })
  const stop = async () => {
    removeCleanup()
    await stopChild(child)
    await rm(cwd, { recursive: true, force: true })
  }
  try {
    await waitForHttp(`${url}${options.healthPath}`, child, options.name, () => lines)
  } catch (error) {
    await stop()
    throw error
  }
  return {
    name: options.name,
    pid: child.pid!,
    url,
    child,
    rssKiB: () => rssKiB(child.pid!),
    log: () => [...lines],
    stop,
  }
}

export interface ServiceOptions {
  databaseUrl: string
  jwtSecret: string
  env?: Record<string, string>
  name?: string
  /** Extra Node options for this instance (diagnostics such as --heapsnapshot-signal). */
  nodeOptions?: string[]
  /** The directory holding the server.js to run (a snapshot of another commit's build); default the working tree's. */
  build?: string
}

let profiles = 0

/**
 * `--cpu-prof` options when BENCH_CPU_PROF_DIR is set: one numbered directory per started process. Node names the
 * files itself (CPU.<date>.<pid>.<thread>...): a process running TypeScript through tsx has a second thread (the
 * module hooks) whose profile would otherwise overwrite the main thread's. The main thread's is the largest.
 */
export async function profileOptions(name: string): Promise<string[]> {
  const perfMap = benchConfig.perfMap ? ['--perf-basic-prof'] : []
  if (!benchConfig.cpuProfileDir) return perfMap
  profiles += 1
  const dir = resolve(benchConfig.cpuProfileDir, `${String(profiles).padStart(2, '0')}-${name.replace(/[^a-z0-9-]+/gi, '-')}`)
  await mkdir(dir, { recursive: true })
  return [...perfMap, '--cpu-prof', `--cpu-prof-dir=${dir}`]
}

/**
 * The Node flags `npm start` runs the service with (the working tree's package.json), so an instance here runs as
 * production does; a commit comparison runs both builds with them, so it compares code, not flags.
 */
export async function startNodeFlags(): Promise<string[]> {
  const { scripts } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const flags = /^exec node ((?:--\S+ )*)dist\/server\.js$/.exec(scripts.start ?? '')?.[1]
  if (flags === undefined) throw new Error(`package.json's start script is not "exec node [--flag ...] dist/server.js": ${scripts.start}`)
  return flags.split(' ').filter(Boolean)
}

/** The real service, `node dist/server.js` (from the snapshot), with production settings and `npm start`'s flags. */
export async function startService(options: ServiceOptions): Promise<RunningProcess> {
  const build = options.build ?? (await serviceBuild())
  const name = options.name ?? 'service'
  const nodeOptions = [...(await startNodeFlags()), ...(await profileOptions(name)), ...(options.nodeOptions ?? [])]
  return startProcess({
    name,
    script: join(build, 'server.js'),
    nodeOptions,
    env: { ...productionEnv(options.databaseUrl, options.jwtSecret), ...options.env },
    healthPath: '/actuator/health',
  })
}

/** Warnings and errors the service logged (LOG_LEVEL=warn prints nothing else), for the report. */
export function loggedProblems(service: RunningProcess): string[] {
  return service.log().filter((line) => /"level":(40|50|60)/.test(line) || !line.startsWith('{'))
}

/** The logged problems grouped by message: `3 x error "no tenant transaction for this request"`. */
export function summariseProblems(lines: string[]): string {
  const counts = new Map<string, number>()
  for (const line of lines) {
    let key = line.slice(0, 160)
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; source?: string; code?: string; reason?: string }
      const level = entry.level === 40 ? 'warn' : entry.level === 50 ? 'error' : 'fatal'
      key = `${level} "${entry.err?.message ?? entry.msg ?? ''}"${entry.err?.message && entry.msg ? ` (${entry.msg})` : ''}`
      // An outage line (lib/observability/database-outage.ts) says why in its own fields: which work, which error.
      if (entry.reason !== undefined) key += ` (${[entry.source, entry.code, entry.reason].filter(Boolean).join(': ')})`
    } catch {
      // not JSON: keep the raw start of the line
    }
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return [...counts].map(([key, count]) => `${count} x ${key}`).join('; ')
}
