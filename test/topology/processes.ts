import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { delimiter, join } from 'node:path'

/** Child processes of the topology harness: start, watch their output, wait with deadlines, kill. */

// Debian installs pgbouncer and haproxy in /usr/sbin, which a non-root PATH often lacks.
const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']

/** The absolute path of an executable on PATH or in an sbin directory, or null. */
export function findExecutable(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SBIN_DIRS]
  for (const dir of dirs) {
    const candidate = join(dir, name)
    if (existsSync(candidate)) return candidate
  }
  return null
}

/** A loopback port that was free a moment ago (the OS picks it; the caller binds it next). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Polls `check` until it returns a value other than undefined, or throws `what` after the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

const OUTPUT_LIMIT = 64 * 1024

export class Child {
  readonly process: ChildProcess
  /** The last 64 KiB of stdout and stderr together, for failure messages. */
  output = ''
  exited: { code: number | null; signal: NodeJS.Signals | null } | null = null
  private readonly exit: Promise<void>

  constructor(
    readonly name: string,
    command: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {
    this.process = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-OUTPUT_LIMIT)
    }
    this.process.stdout?.on('data', collect)
    this.process.stderr?.on('data', collect)
    this.exit = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        this.exited = { code, signal }
        resolve()
      })
      // A spawn failure (missing binary) emits 'error' and no 'exit'.
      this.process.once('error', (error) => {
        this.output += `\nspawn failed: ${error.message}`
        this.exited = { code: null, signal: null }
        resolve()
      })
    })
  }

  get pid(): number | undefined {
    return this.process.pid
  }

  /** Fails fast with the child's output when it has already exited. */
  assertRunning(): void {
    if (this.exited) {
      throw new Error(`${this.name} exited (code ${this.exited.code}, signal ${this.exited.signal}):\n${this.tail()}`)
    }
  }

  /** Resolves with the first match of `pattern` in the output, or fails on exit or after the deadline. */
  async waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    return waitFor(
      `${this.name} to print ${pattern}`,
      () => {
        const match = pattern.exec(this.output)
        if (match) return match
        this.assertRunning()
        return undefined
      },
      timeoutMs,
      25,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n--- ${this.name} output ---\n${this.tail()}`)
    })
  }

  /** The last `lines` lines of output, each cut to `width` characters. */
  tail(lines = 40, width = 2000): string {
    return this.output
      .split('\n')
      .slice(-lines)
      .map((line) => (line.length > width ? `${line.slice(0, width)}...` : line))
      .join('\n')
  }

  /** Sends `signal` and waits for the exit; SIGKILL after `graceMs` if it is still running. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
    if (this.exited) return
    this.process.kill(signal)
    const timer = setTimeout(() => {
      if (!this.exited) this.process.kill('SIGKILL')
    }, graceMs)
    await this.exit
    clearTimeout(timer)
  }

  /** kill -9: no shutdown hook of the child runs. */
  async kill9(): Promise<void> {
    await this.stop('SIGKILL', 0)
  }
}
