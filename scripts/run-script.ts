import { AppError } from '../lib/errors.js'
import { ConfigError } from '../lib/env.js'

/** Operations scripts print JSON on success and one clear line (exit 1) on failure. */
export async function runScript(main: () => Promise<unknown>): Promise<void> {
  try {
    const result = await main()
    process.stdout.write(`${JSON.stringify(result)}\n`)
  } catch (error) {
    const message =
      error instanceof ConfigError || error instanceof AppError || error instanceof UsageError
        ? error.message
        : String(error instanceof Error ? error.message : error)
    process.stderr.write(`error: ${message}\n`)
    process.exitCode = 1
  }
}

export class UsageError extends Error {}
