/**
 * SQLSTATEs a correct client never causes on a connection of its own: a named statement that already exists, one
 * that does not, a bind that does not fit its statement. Behind a transaction pooler that does not track prepared
 * statements (PgBouncer before 1.21 with SVC_DB_PREPARED_STATEMENTS=true) they are the sign that statements
 * prepared on one server connection were used on another.
 */
const MIXED_SESSION_SQLSTATES = new Set(['42P05', '26000', '08P01'])

/** How long one such error keeps the readiness probe DOWN: long enough for an orchestrator to see it. */
export const MIXED_SESSION_WINDOW_MS = 60_000

/** What the runtime pool has seen that a probe query alone might miss. */
export class PoolHealth {
  #lastMixedSessionAt: number | null = null
  #lastMixedSessionError = ''

  noteStatementError(error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code
    if (typeof code !== 'string' || !MIXED_SESSION_SQLSTATES.has(code)) return
    this.#lastMixedSessionAt = Date.now()
    this.#lastMixedSessionError = `${code}: ${(error as Error).message}`
  }

  /** Why the request path is not trustworthy now, or null. */
  problem(now = Date.now()): string | null {
    if (this.#lastMixedSessionAt === null || now - this.#lastMixedSessionAt > MIXED_SESSION_WINDOW_MS) return null
    return (
      `server connections are shared under this client (${this.#lastMixedSessionError}): behind a transaction ` +
      'pooler that does not track prepared statements, set SVC_DB_PREPARED_STATEMENTS=false'
    )
  }
}
