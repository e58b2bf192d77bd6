import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { repoRoot as root, runProcess } from '../support/child-processes.js'
import { createTenant } from '../support/fixtures.js'
import { until } from '../support/auth-fixtures.js'
import { describePostgres, TEST_JWT_SECRET } from '../support/helper.js'

// A first build on a busy machine takes tens of seconds; npm ci from the local cache a few more.
const BUILD_TIMEOUT_MS = 240_000

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return runProcess(command, args, { cwd, env: { ...process.env, ...env }, timeout: BUILD_TIMEOUT_MS })
}

const mtime = (path: string) => statSync(path).mtimeMs
const scriptEnv = () => ({ DATABASE_URL: inject('databaseUrl'), SVC_BCRYPT_COST: '4', NODE_ENV: 'test', LOG_LEVEL: 'silent' })
const staffArgs = (slug: string) => ['run', '-s', 'user:create', '--', '--tenant', slug, '--role', 'INSTRUCTOR', '--name', 'Build Check']

// Child processes open the run's database by URL; the embedded store allows one process per directory.
describePostgres('operations commands (npm run user:create, migrate, start)', () => {
  beforeAll(async () => {
    const built = await run(process.execPath, ['scripts/ensure-build.mjs'], root)
    expect(built, built.stdout + built.stderr).toMatchObject({ code: 0 })
  }, BUILD_TIMEOUT_MS)

  it('does not recompile when the build is current', async () => {
    const tenant = await createTenant()
    const stamp = join(root, 'dist/.build-stamp.json')
    const before = { stamp: mtime(stamp), server: mtime(join(root, 'dist/server.js')), script: mtime(join(root, 'dist/scripts/user-create.js')) }

    for (const attempt of [1, 2]) {
      const result = await run('npm', staffArgs(tenant.slug), root, scriptEnv())
      expect(result, `run ${attempt}`).toMatchObject({ code: 0, stderr: '' })
      expect(Object.keys(JSON.parse(result.stdout)).sort()).toEqual(['temporaryPassword', 'userId', 'userLoginId'])
    }

    const after = { stamp: mtime(stamp), server: mtime(join(root, 'dist/server.js')), script: mtime(join(root, 'dist/scripts/user-create.js')) }
    expect(after).toEqual(before)
  }, BUILD_TIMEOUT_MS)

  describe('after npm ci --omit=dev on a built tree', () => {
    let tree: string

    beforeAll(async () => {
      tree = mkdtempSync(join(tmpdir(), 'svc-omit-dev-'))
      // The tree as deployed: sources, the build and the lockfile, timestamps kept; no development dependencies.
      for (const entry of ['app.ts', 'build.ts', 'server.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'plugins', 'routes', 'lib', 'db', 'scripts', 'dist']) {
        cpSync(join(root, entry), join(tree, entry), { recursive: true, preserveTimestamps: true })
      }
      const installed = await run('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], tree)
      expect(installed, `npm ci --omit=dev --offline (needs the packages in the local npm cache): ${installed.stderr.slice(-2000)}`).toMatchObject({ code: 0 })
    }, BUILD_TIMEOUT_MS)
    afterAll(() => rmSync(tree, { recursive: true, force: true }))

    it('runs npm run migrate and npm run user:create without TypeScript or tsx', async () => {
      const tenant = await createTenant()
      expect(await run('npm', ['run', '-s', 'migrate'], tree, scriptEnv())).toMatchObject({ code: 0, stderr: '' })
      const created = await run('npm', staffArgs(tenant.slug), tree, scriptEnv())
      expect(created).toMatchObject({ code: 0, stderr: '' })
      expect(JSON.parse(created.stdout)).toHaveProperty('userLoginId')
    }, BUILD_TIMEOUT_MS)

    // npm does not pass SIGTERM on to its script (npm 11 exits and orphans it), so supervisors signal the process
    // group (systemd's default KillMode, `kill -TERM -PGID`), or run `node dist/server.js` directly (docs/operations.md#scripts).
    // What `docker stop` or an init system without process groups does: signal npm's own pid. npm forwards the
    // signal to its script, which `exec`s node, so the service itself drains and exits (no orphan left serving).
    it('npm start serves, and SIGTERM to the npm process alone stops the service gracefully', async () => {
      const child = spawn('npm', ['start'], {
        detached: true,
        cwd: tree,
        env: { ...process.env, ...scriptEnv(), LOG_LEVEL: 'info', PORT: '0', SVC_JWT_SECRET: TEST_JWT_SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const exited = once(child, 'exit')

      const deadline = Date.now() + 60_000
      let address: string | undefined
      while (!address && Date.now() < deadline && child.exitCode === null) {
        address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
        if (!address) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(address, output).toBeDefined()
      expect((await fetch(`${address}/actuator/health/liveness`)).status).toBe(200)

      process.kill(child.pid!, 'SIGTERM')
      await exited
      const deadline2 = Date.now() + 30_000
      while (!output.includes('shutting down: finishing in-flight requests') && Date.now() < deadline2) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(output).toContain('shutting down: finishing in-flight requests')
      await until(async () => fetch(`${address}/actuator/health/liveness`).then(() => false, () => true), 30_000)
      await expect(fetch(`${address}/actuator/health/liveness`)).rejects.toThrow()
      // The group is empty once the service has gone: nothing was left behind in it.
      expect(() => process.kill(-child.pid!, 0)).toThrow()
    }, BUILD_TIMEOUT_MS)

    it('refuses with a clear message when the build is stale and TypeScript is absent', async () => {
      const future = new Date(Date.now() + 60_000)
      utimesSync(join(tree, 'app.ts'), future, future)
      const result = await run('npm', staffArgs('any-tenant'), tree, scriptEnv())
      expect(result.code).not.toBe(0)
      expect(result.stderr).toMatch(/error: the build in dist\/ is out of date .* TypeScript is not installed/)
    }, BUILD_TIMEOUT_MS)
  })
})
