import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { until } from '../support/auth-fixtures.js'
import { describePostgres, TEST_JWT_SECRET } from '../support/helper.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const TIMEOUT_MS = 240_000

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(command, args, { cwd: root, timeout: TIMEOUT_MS }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout: String(stdout), stderr: String(stderr) }),
    ),
  )
}

/** The image's command (the Dockerfile's last CMD, exec form). */
function imageCommand(): string[] {
  const commands = [...readFileSync(join(root, 'Dockerfile'), 'utf8').matchAll(/^CMD (\[.*\])$/gm)]
  return JSON.parse(commands.at(-1)![1]!) as string[]
}

describe('the service\'s Node flags', () => {
  it('are the same in the image as in npm start, which the bench also runs with', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
    expect(`exec ${imageCommand().join(' ')}`).toBe(scripts.start)
    expect(imageCommand()).toEqual(['node', '--max-semi-space-size=64', 'dist/server.js'])
  })
})

describe('scripts/build-runtime.sh', () => {
  it('exits 2 with a usage line without exactly one OUTDIR', async () => {
    for (const args of [[], ['a', 'b'], ['']]) {
      const result = await run('bash', ['scripts/build-runtime.sh', ...args])
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/^usage: .*build-runtime\.sh OUTDIR/)
    }
  })
})

// The image's runtime stage is exactly this tree (Dockerfile): building and starting it here keeps what ships from
// drifting away from what is tested, on machines without Docker.
describePostgres('the runtime tree of the production image', () => {
  const out = mkdtempSync(join(tmpdir(), 'svc-runtime-'))
  afterAll(() => rmSync(out, { recursive: true, force: true }))

  it('builds with production dependencies only, serves as the least-privilege role, and stops on SIGTERM', async () => {
    expect(await run(process.execPath, ['scripts/ensure-build.mjs'])).toMatchObject({ code: 0 })
    const built = await run('bash', ['scripts/build-runtime.sh', out])
    expect(built.code, built.stderr).toBe(0)
    expect(existsSync(join(out, 'dist/server.js'))).toBe(true)
    for (const devTool of ['typescript', 'vitest', 'tsx']) expect(existsSync(join(out, 'node_modules', devTool))).toBe(false)

    // As the Dockerfile's CMD: node, its flags and dist/server.js from the tree, no npm, no sources.
    const service = spawn(process.execPath, imageCommand().slice(1), {
      cwd: out,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        DATABASE_URL: inject('runtimeDatabaseUrl'),
        DATABASE_MIGRATION_URL: inject('databaseUrl'),
        // The run's: its key opens what the shared database holds sealed, which the start checks.
        SVC_JWT_SECRET: TEST_JWT_SECRET,
        SVC_SMS_DISPATCHER: 'off',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    service.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    service.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = once(service, 'exit')
    try {
      let address: string | undefined
      await until(() => {
        address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
        return address !== undefined || service.exitCode !== null
      }, 60_000)
      expect(address, output).toBeDefined()
      const ready = await fetch(`${address}/actuator/health/readiness`)
      expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: 'UP' } })
      service.kill('SIGTERM')
      const [code] = await exited
      expect(code, output).toBe(0)
      expect(output).toContain('shutting down: finishing in-flight requests')
    } finally {
      if (service.exitCode === null) service.kill('SIGKILL')
    }
  }, TIMEOUT_MS)
})
