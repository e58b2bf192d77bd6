import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { DriverMode } from '../../db/database.js'
import { databaseDriver } from '../support/helper.js'

export interface InstanceConfig {
  databaseUrl: string
  providerUrl: string
  credentials: { apiKey: string; apiSecret: string }
  leaseSeconds: number
  concurrency: number
  maxAttempts: number
  /**
   * The adapter's time limit for one call; it must stay below the lease by more than a second (createDispatcher).
   * Default: the lease less 1.5 s.
   */
  providerTimeoutMs?: number
  /** The run's pg driver; set by startDispatchInstance. */
  driver?: DriverMode
}

export interface DispatchInstance {
  /** SIGKILL, then waits until the process is gone. */
  kill(): Promise<void>
}

const MAIN = fileURLToPath(new URL('./instance-main.ts', import.meta.url))

/** Starts a dispatcher in a child process (test/dispatch/instance-main.ts) that keeps looking for due work. */
export function startDispatchInstance(config: InstanceConfig): DispatchInstance {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', MAIN, JSON.stringify({ ...config, driver: databaseDriver })], {
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    async kill() {
      child.kill('SIGKILL')
      await exited
    },
  }
}
