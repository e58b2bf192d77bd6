import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { embeddedDataDir } from '../../db/embedded.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
// A new store runs initdb: seconds on a busy machine.
const TIMEOUT_MS = 120_000

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** npm run user:create on the embedded store in `dataDir`, from the sources (the build is not under test here). */
function userCreate(dataDir: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/user-create.ts', '--tenant', 'no-such-tenant', '--role', 'INSTRUCTOR', '--name', 'Second Process'],
      { cwd: root, env: { ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dataDir, NODE_ENV: 'test' }, timeout: TIMEOUT_MS },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

async function holdStore(dataDir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fakes/embedded-store-holder.ts', dataDir], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + TIMEOUT_MS
  while (!output.includes('open') && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  expect(output).toContain('open')
  return child
}

describe('embedded store: one process per directory', () => {
  const dirs: string[] = []
  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-lock-'))
    dirs.push(dir)
    return dir
  }
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

  it('refuses a second process with a message naming the store and the holder', async () => {
    const dataDir = newDataDir()
    const holder = await holdStore(dataDir)
    try {
      const second = await userCreate(dataDir)
      expect(second.code).toBe(1)
      expect(second.stderr).toBe(
        `error: the embedded store ${embeddedDataDir(dataDir)} is in use by process ${holder.pid}; stop it first or set DATABASE_URL\n`,
      )
    } finally {
      holder.stdin.end()
      await once(holder, 'exit')
    }
    // Released on close: the next process opens the store (and finds no such tenant in it).
    expect(existsSync(`${embeddedDataDir(dataDir)}.lock`)).toBe(false)
    expect((await userCreate(dataDir)).stderr).toBe('error: no tenant with slug "no-such-tenant"\n')
  }, TIMEOUT_MS)

  it('takes over a lock left by a process that no longer runs', async () => {
    const dataDir = newDataDir()
    const holder = await holdStore(dataDir)
    holder.kill('SIGKILL')
    await once(holder, 'exit')
    expect(existsSync(`${embeddedDataDir(dataDir)}.lock`)).toBe(true)
    expect((await userCreate(dataDir)).stderr).toBe('error: no tenant with slug "no-such-tenant"\n')
  }, TIMEOUT_MS)

  it('takes over a lock naming a pid that is not running', async () => {
    const dataDir = newDataDir()
    const creator = await holdStore(dataDir)
    creator.stdin.end()
    await once(creator, 'exit')
    writeFileSync(join(dataDir, 'pglite.lock'), '2147483646\n')
    expect((await userCreate(dataDir)).stderr).toBe('error: no tenant with slug "no-such-tenant"\n')
  }, TIMEOUT_MS)
})
