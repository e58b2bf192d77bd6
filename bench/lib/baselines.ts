import { join } from 'node:path'
import { spawnTracked } from './cleanup.js'
import { benchConfig } from './config.js'
import { cpuSnapshot, cpuUse, describeCpu } from './cpu.js'
import { log, measure, median, noiseIn, NOISY_RUN_RETRIES, quiet, type Measurement } from './load.js'
import type { SeededTenant } from './seed.js'
import { PASSWORD } from './seed.js'
import { profileOptions, REPO_ROOT, startNodeFlags, startProcess, TSX_IMPORT, type RunningProcess } from './service.js'
import { signAccessToken } from './tokens.js'

export type BaselineKey = 'jwt' | 'db' | 'db-no-revocation' | 'plain' | 'plain-revocation' | 'plain-refresh' | 'bcrypt' | 'bcrypt-login'

export interface BaselineFigure {
  key: BaselineKey
  label: string
  /** Requests (or compares) per second, median of the runs. */
  rps: number
  p50?: number
  p99?: number
  unit: 'req/s' | 'compares/s'
  cpu?: string
}

/** Where a baseline runs: the scenario's database, tenant and token secret. */
export interface BaselineTarget {
  databaseUrl: string
  tenant: SeededTenant
  jwtSecret: string
}

export const BASELINE_LABELS: Record<BaselineKey, string> = {
  jwt: 'JWT ceiling (Fastify + HS256 verify)',
  db: 'database ceiling (JWT + tx: GUC, revoked-token check, RLS user row)',
  'db-no-revocation': 'database ceiling without the revoked-token lookup',
  plain: 'plain RLS server (@fastify/jwt, pg Pool, BEGIN / GUC / PK read / COMMIT awaited)',
  'plain-revocation': 'plain RLS server with the revoked-token lookup as a fifth statement',
  'plain-refresh': "plain refresh server (@fastify/jwt, pg Pool, the rotation's nine statements awaited, two signs)",
  bcrypt: 'bcrypt ceiling (compares/s, cost 10, 4 libuv threads)',
  'bcrypt-login': 'login-shaped HTTP baseline (JSON body, bcrypt compare, 2 JWT signs)',
}

const script = (name: string) => join(REPO_ROOT, 'bench', 'baselines', name)

function bearerHeaders(target: BaselineTarget): Record<string, string>[] {
  return target.tenant.staff.map((user) => ({
    authorization: `Bearer ${signAccessToken(target.jwtSecret, {
      userId: user.id,
      tenantId: target.tenant.tenantId,
      tenantSlug: target.tenant.slug,
      role: 'MANAGER',
    })}`,
  }))
}

function figure(key: BaselineKey, measured: Measurement): BaselineFigure {
  return { key, label: BASELINE_LABELS[key], rps: measured.rps, p50: measured.p50, p99: measured.p99, unit: 'req/s', cpu: measured.cpu }
}

/**
 * A baseline server (a file of bench/baselines/) on `databaseUrl`, answering once its /health does. It runs with the
 * service's Node flags (`npm start`'s), so a ratio compares code on the same runtime, not runtime settings.
 */
export async function startBaseline(name: string, databaseUrl: string, jwtSecret: string): Promise<RunningProcess> {
  return startProcess({
    name,
    script: script(name),
    nodeOptions: [...(await startNodeFlags()), '--import', TSX_IMPORT, ...(await profileOptions(`baseline-${name.replace(/\.ts$/, '')}`))],
    env: { NODE_ENV: 'production', SVC_JWT_SECRET: jwtSecret, DATABASE_URL: databaseUrl, SVC_BCRYPT_COST: '10', SVC_DB_POOL_MAX: String(benchConfig.poolMax) },
    healthPath: '/health',
  })
}

async function measureServer(
  name: string,
  target: BaselineTarget,
  routes: { key: BaselineKey; method: 'GET' | 'POST'; path: string; connectionHeaders?: Record<string, string>[]; connectionBodies?: string[]; headers?: Record<string, string> }[],
): Promise<BaselineFigure[]> {
  log(`baseline ${name}: starting`)
  const server = await startBaseline(name, target.databaseUrl, target.jwtSecret)
  try {
    const figures: BaselineFigure[] = []
    for (const route of routes) {
      const measured = await measure({
        label: `baseline ${route.key}`,
        watch: { [name]: server.pid },
        spec: () => ({
          url: server.url,
          method: route.method,
          path: route.path,
          connections: benchConfig.connections,
          duration: benchConfig.duration,
          ...(route.headers && { headers: route.headers }),
          ...(route.connectionHeaders && { connectionHeaders: route.connectionHeaders }),
          ...(route.connectionBodies && { connectionBodies: route.connectionBodies }),
        }),
      })
      if (measured.failures > 0) throw new Error(`baseline ${route.key} answered ${measured.failures} failures`)
      figures.push(figure(route.key, measured))
    }
    return figures
  } finally {
    await server.stop()
  }
}

/** One run of the compare loop in a process of its own; `other`: CPU that went to unrelated processes meanwhile. */
async function bcryptRun(): Promise<{ rate: number; cpu: string; noise: string | null }> {
  await quiet()
  const before = await cpuSnapshot()
  const child = spawnTracked(process.execPath, ['--import', TSX_IMPORT, script('bcrypt-ceiling.ts'), String(benchConfig.duration)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', SVC_BCRYPT_COST: '10' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  const use = cpuUse(before, await cpuSnapshot())
  if (code !== 0) throw new Error(`bcrypt-ceiling failed (exit ${code})`)
  const { comparesPerSecond, cpuMicros } = JSON.parse(out.trim().split('\n').pop()!) as { comparesPerSecond: number; cpuMicros: number }
  const own = (cpuMicros / 1e6 / use.seconds) * 100
  use.processes['bcrypt-ceiling.ts'] = own
  return { rate: comparesPerSecond, cpu: describeCpu(use), noise: noiseIn(use) }
}

/** bcrypt.compare throughput, median of the runs; a run disturbed by other processes is repeated. */
async function measureBcrypt(): Promise<BaselineFigure> {
  const runs: { rate: number; cpu: string }[] = []
  for (let i = 0; i < benchConfig.runs; i++) {
    for (let attempt = 1; ; attempt++) {
      const run = await bcryptRun()
      log(`  baseline bcrypt: run ${i + 1}/${benchConfig.runs} ${run.rate.toFixed(1)} compares/s\n      ${run.cpu}`)
      if (!run.noise || attempt > NOISY_RUN_RETRIES) {
        runs.push(run)
        break
      }
      log(`  baseline bcrypt: ${run.noise}; repeating it`)
    }
  }
  const sorted = [...runs].sort((a, b) => a.rate - b.rate)
  return { key: 'bcrypt', label: BASELINE_LABELS.bcrypt, rps: median(runs.map((run) => run.rate)), unit: 'compares/s', cpu: sorted[Math.floor((sorted.length - 1) / 2)]!.cpu }
}

/**
 * Each baseline is measured once per harness run, the first time a scenario asks for it, while no service
 * instance is running; later scenarios reuse the figure.
 */
export class Baselines {
  private readonly cache = new Map<BaselineKey, Promise<BaselineFigure>>()

  get(key: BaselineKey, target: BaselineTarget): Promise<BaselineFigure> {
    const cached = this.cache.get(key)
    if (cached) return cached
    if (key === 'db' || key === 'db-no-revocation') {
      const headers = bearerHeaders(target)
      const both = measureServer('db-ceiling.ts', target, [
        { key: 'db', method: 'GET', path: '/me', connectionHeaders: headers },
        { key: 'db-no-revocation', method: 'GET', path: '/me-without-revocation', connectionHeaders: headers },
      ])
      this.cache.set('db', both.then((figures) => figures[0]!))
      this.cache.set('db-no-revocation', both.then((figures) => figures[1]!))
    } else if (key === 'jwt') {
      this.cache.set(key, measureServer('jwt-ceiling.ts', target, [{ key, method: 'GET', path: '/me', connectionHeaders: bearerHeaders(target) }]).then((f) => f[0]!))
    } else if (key === 'bcrypt') {
      this.cache.set(key, measureBcrypt())
    } else {
      const bodies = target.tenant.staff.map((user) => JSON.stringify({ userLoginId: user.loginId, password: PASSWORD, customId: target.tenant.customId }))
      this.cache.set(
        key,
        measureServer('bcrypt-login.ts', target, [
          { key, method: 'POST', path: '/login', headers: { 'content-type': 'application/json' }, connectionBodies: bodies },
        ]).then((f) => f[0]!),
      )
    }
    return this.cache.get(key)!
  }

  /** Every figure measured so far, for the baseline table. */
  async all(): Promise<BaselineFigure[]> {
    const settled = await Promise.allSettled([...this.cache.values()])
    const figures = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
    return [...new Map(figures.map((figure) => [figure.key, figure])).values()].sort((a, b) => a.key.localeCompare(b.key))
  }
}
