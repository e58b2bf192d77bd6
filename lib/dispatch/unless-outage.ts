import type { DatabaseOutage } from '../observability/database-outage.js'

/** Logs a failure through `otherwise`, unless it is the database being out of reach. */
export type UnlessOutage = (error: unknown, otherwise: () => void) => void

/**
 * A failure because the database is out of reach is counted in the outage (one warn when it starts, one info when it
 * ends) instead of a line with a stack each; any other failure is logged by `otherwise`.
 */
export function unlessOutage(outage: Pick<DatabaseOutage, 'absorbs'> | undefined): UnlessOutage {
  return (error, otherwise) => {
    if (!outage?.absorbs('dispatch', error)) otherwise()
  }
}
