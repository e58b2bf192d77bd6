import { ConfigError, loadEnv } from '../../lib/env.js'

/** The problems loadEnv names for `source`, one a setting; none when it loads. */
export function configProblems(source: Record<string, string>): string[] {
  try {
    loadEnv(source)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}
