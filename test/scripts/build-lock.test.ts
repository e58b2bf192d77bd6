import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { withBuildLock } from '../../scripts/build-lock.mjs'
import { repoRoot } from '../support/child-processes.js'

// Operations commands started together on a stale tree (and the script tests, which run them side by side) must
// not compile into the same dist/ at the same time: scripts/ensure-build.mjs builds under this lock.
describe('scripts/build-lock.mjs', () => {
  let dir: string
  let lockPath: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-build-lock-'))
    lockPath = join(dir, '.build-lock')
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  /** A process that holds the lock for `holdMs` and writes when its work starts and ends. */
  function holder(name: string, holdMs: number) {
    const journal = join(dir, 'journal')
    const code = `
      import { appendFileSync } from 'node:fs'
      import { withBuildLock } from ${JSON.stringify(join(repoRoot, 'scripts/build-lock.mjs'))}
      withBuildLock(${JSON.stringify(lockPath)}, () => {
        appendFileSync(${JSON.stringify(journal)}, 'start ${name}\\n')
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs})
        appendFileSync(${JSON.stringify(journal)}, 'end ${name}\\n')
      })`
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: 'inherit' })
    return once(child, 'exit').then(([exitCode]) => exitCode as number)
  }

  it('lets one holder work at a time, across processes', async () => {
    const codes = await Promise.all(['a', 'b', 'c'].map((name) => holder(name, 300)))
    expect(codes).toEqual([0, 0, 0])
    const lines = readFileSync(join(dir, 'journal'), 'utf8').trim().split('\n')
    expect(lines).toHaveLength(6)
    // Without the lock the three starts come first; with it every start is followed by its own end.
    for (let i = 0; i < lines.length; i += 2) expect(lines[i + 1]).toBe(lines[i]!.replace('start', 'end'))
    expect(existsSync(lockPath)).toBe(false)
  })

  it('takes over a lock whose process is gone (a build killed mid-way)', () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid!
    writeFileSync(lockPath, String(gone))
    expect(withBuildLock(lockPath, () => 'built')).toBe('built')
    expect(existsSync(lockPath)).toBe(false)
  })

  it('waits for a live holder, and gives up with a message when the wait runs out', () => {
    writeFileSync(lockPath, String(process.pid))
    expect(() => withBuildLock(lockPath, () => 'built', { timeoutMs: 500 })).toThrow(/another build still holds .*\.build-lock/)
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.pid))
  })

  it('releases the lock when the work throws', () => {
    expect(() =>
      withBuildLock(lockPath, () => {
        throw new Error('tsc failed')
      }),
    ).toThrow('tsc failed')
    expect(existsSync(lockPath)).toBe(false)
  })
})
