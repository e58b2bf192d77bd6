import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { embeddedDataDir } from '../../db/embedded.js'
import { runScriptSource, startScriptSource } from '../support/child-processes.js'

// A new store runs initdb: seconds on a busy machine.
const TIMEOUT_MS = 120_000

/** npm run user:create on the embedded store in `dataDir`, from the sources (the build is not under test here). */
function userCreate(dataDir: string) {
  return runScriptSource(
    'scripts/user-create.ts',
    ['--tenant', 'no-such-tenant', '--role', 'INSTRUCTOR', '--name', 'Second Process'],
    { DATABASE_URL: '', SVC_DATA_DIR: dataDir, NODE_ENV: 'test' },
    TIMEOUT_MS,
  )
}

async function holdStore(dataDir: string) {
  const { child, output } = startScriptSource('test/support/fakes/embedded-store-holder.ts', [dataDir], process.env)
  const deadline = Date.now() + TIMEOUT_MS
  while (!output().includes('open') && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  expect(output()).toContain('open')
  return child
}

// Each test has a store directory of its own, so they run side by side: most of their time is stores starting.
describe.concurrent('embedded store: one process per directory', () => {
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

  it.each([
    [
      'left by a process that no longer runs',
      async (holder: ChildProcessWithoutNullStreams, dataDir: string) => {
        holder.kill('SIGKILL')
        await once(holder, 'exit')
        expect(existsSync(`${embeddedDataDir(dataDir)}.lock`)).toBe(true)
      },
    ],
    [
      'naming a pid that is not running',
      async (creator: ChildProcessWithoutNullStreams, dataDir: string) => {
        creator.stdin.end()
        await once(creator, 'exit')
        writeFileSync(join(dataDir, 'pglite.lock'), '2147483646\n')
      },
    ],
  ])('takes over a lock %s', async (_case, leaveStaleLock) => {
    const dataDir = newDataDir()
    await leaveStaleLock(await holdStore(dataDir), dataDir)
    expect((await userCreate(dataDir)).stderr).toBe('error: no tenant with slug "no-such-tenant"\n')
  }, TIMEOUT_MS)
})
