import { execFile, spawn, type ChildProcessWithoutNullStreams, type ExecFileOptions } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The repository root: scripts run from here, as npm runs them. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

/** How a child process ended: its exit code (-1 when it was killed or never started) and what it printed. */
export interface ProcessRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command to its end. Never rejects: a failing command is an exit code and output for the test to assert on. */
export function runProcess(command: string, args: string[], options: ExecFileOptions): Promise<ProcessRun> {
  return new Promise((resolve) => {
    execFile(command, args, options, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout: String(stdout), stderr: String(stderr) })
    })
  })
}

/**
 * Runs a TypeScript script of this repository from its source (the build is not under test), in a process of its
 * own with `env` on top of this process's environment.
 */
export function runScriptSource(script: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ProcessRun> {
  return runProcess(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, timeout: timeoutMs })
}

export interface StartedProcess {
  child: ChildProcessWithoutNullStreams
  /** Everything it has printed so far, stdout and stderr as they came. */
  output(): string
}

/** Starts a TypeScript file of this repository from its source with exactly `env`, and keeps what it prints. */
export function startScriptSource(script: string, args: string[], env: NodeJS.ProcessEnv): StartedProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot, env, stdio: 'pipe' })
  let output = ''
  const keep = (chunk: Buffer) => (output += chunk.toString())
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  return { child, output: () => output }
}

/** The address a started server.ts listens on, once it says so; its output in the error if it exits or is late. */
export async function listeningAddress(server: StartedProcess, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output())?.[1]
    if (address) return address
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`server exited early:\n${server.output()}`)
    if (Date.now() > deadline) throw new Error(`server did not start:\n${server.output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
