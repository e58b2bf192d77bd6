import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'

/** A second process opening the embedded store's directory would corrupt it (PGlite aborts); it gets this instead. */
export class EmbeddedStoreInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the embedded store ${dataDir} is in use by process ${pid}; stop it first or set DATABASE_URL`)
    this.name = 'EmbeddedStoreInUseError'
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function holderOf(lockPath: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

export interface EmbeddedLock {
  release(): void
}

/**
 * Takes `lockPath` for this process (its pid inside, created exclusively). A lock left by a process that no longer
 * runs, or by this process, is taken over; a live holder is refused with EmbeddedStoreInUseError. Released on
 * `release()` and when the process exits.
 */
export function acquireEmbeddedLock(lockPath: string, dataDir: string): EmbeddedLock {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(lockPath, 'wx')
      try {
        writeSync(fd, `${process.pid}\n`)
      } finally {
        closeSync(fd)
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = holderOf(lockPath)
      if (holder !== null && holder !== process.pid && isAlive(holder)) throw new EmbeddedStoreInUseError(dataDir, holder)
      if (attempt >= 2) throw new EmbeddedStoreInUseError(dataDir, holder ?? 0)
      // A lock being written this instant reads as empty: a second look before calling it stale.
      if (holder === null && attempt === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
      else {
        try {
          unlinkSync(lockPath)
        } catch (unlinkError) {
          if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError
        }
      }
    }
  }

  const release = () => {
    process.removeListener('exit', release)
    // Only our own lock: after a takeover the file may name another process.
    if (holderOf(lockPath) !== process.pid) return
    try {
      unlinkSync(lockPath)
    } catch {
      // Already gone.
    }
  }
  process.once('exit', release)
  return { release }
}
