import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'

/**
 * Everything a benchmark starts is registered here and undone in reverse order when the program ends, fails or
 * is interrupted: child processes are killed (their whole process group), databases dropped, temp files removed.
 */

type Cleanup = { label: string; run: () => Promise<void> | void }

const cleanups: Cleanup[] = []
const children = new Set<ChildProcess>()
let cleaning: Promise<void> | null = null

export function onCleanup(label: string, run: () => Promise<void> | void): () => void {
  const entry = { label, run }
  cleanups.push(entry)
  return () => {
    const index = cleanups.indexOf(entry)
    if (index >= 0) cleanups.splice(index, 1)
  }
}

/** Spawns in its own process group, so a kill reaches grandchildren too (npx, shells). */
export function spawnTracked(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true })
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

export function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    try {
      child.kill(signal)
    } catch {
      // already gone
    }
  }
}

/** Asks the process to stop, waits up to `graceMs`, then kills its group. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  try {
    child.kill('SIGTERM')
  } catch {
    // already gone
  }
  const timer = setTimeout(() => killGroup(child), graceMs)
  await exited
  clearTimeout(timer)
  // Anything the process left behind in its group goes too.
  killGroup(child)
}

export async function runCleanups(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of [...children]) killGroup(child, 'SIGTERM')
    while (cleanups.length > 0) {
      const entry = cleanups.pop()!
      try {
        await entry.run()
      } catch (error) {
        console.error(`cleanup "${entry.label}" failed:`, error)
      }
    }
    for (const child of [...children]) killGroup(child)
  })()
  await cleaning
}

/**
 * Runs a benchmark entry point: cleans up on success, failure, Ctrl-C and SIGTERM, and sets the exit code.
 * A last synchronous kill on `exit` covers a crash that skipped the async path.
 */
export async function main(entry: () => Promise<void>): Promise<void> {
  process.on('exit', () => {
    for (const child of children) killGroup(child)
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping and cleaning up`)
      void runCleanups().finally(() => process.exit(130))
    })
  }
  try {
    await entry()
  } catch (error) {
    console.error(error)
    process.exitCode = 1
  } finally {
    await runCleanups()
  }
  // Nothing the harness started may keep the process alive.
  process.exit()
}
