// One build of dist/ at a time. The operations commands (npm run migrate, user:create, ...) each check the build
// first; two of them started together on a stale tree would both compile into the same dist/ and one could read a
// half-written file or the SQL function directory while the other replaces it. Plain JavaScript with no
// dependencies, like ensure-build.mjs, which is its only caller.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'

const POLL_MS = 200

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/** True when the lock names a process that no longer runs (a build killed mid-way leaves its lock behind). */
function holderIsGone(lockPath) {
  let pid
  try {
    pid = Number(readFileSync(lockPath, 'utf8'))
  } catch {
    return false // released meanwhile: the next attempt takes it
  }
  // Empty while its holder is still writing its pid: held.
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return error.code === 'ESRCH'
  }
}

function tryTake(lockPath) {
  try {
    const fd = openSync(lockPath, 'wx')
    writeSync(fd, String(process.pid))
    closeSync(fd)
    return true
  } catch (error) {
    if (error.code === 'EEXIST') return false
    throw error
  }
}

/**
 * Runs `work` while holding the lock file at `lockPath` (created exclusively, holding this process's pid), waiting
 * up to `timeoutMs` for another holder; a lock whose process is gone is taken over. Throws when the wait runs out.
 */
export function withBuildLock(lockPath, work, { timeoutMs = 10 * 60_000 } = {}) {
  const giveUpAt = Date.now() + timeoutMs
  while (!tryTake(lockPath)) {
    if (holderIsGone(lockPath)) {
      rmSync(lockPath, { force: true })
      continue
    }
    if (Date.now() >= giveUpAt) throw new Error(`another build still holds ${lockPath} after ${timeoutMs} ms`)
    sleepSync(POLL_MS)
  }
  try {
    return work()
  } finally {
    rmSync(lockPath, { force: true })
  }
}
