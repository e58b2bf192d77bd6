import type { Kysely } from 'kysely'
import { reserveKeyBudget } from '../../db/repos/api-keys/api-keys.js'
import type { DB } from '../../db/schema.js'
import { AppError } from '../errors.js'

interface Share {
  /** Requests this instance may still admit in the window without asking the database. */
  left: number
  resetsAtMs: number
  /** The budget is spent for this window, on every instance. */
  spent: boolean
  asking: Promise<void> | null
}

/**
 * Each key's budget of requests per minute (SVC_API_KEY_PER_MINUTE), shared by every instance through
 * rate_limit_windows. Counting each request there would add a write to every request; instead an instance takes a
 * share of the window (a twentieth of the budget, at most 100 requests) at a time and admits that many before asking again, so the
 * database sees one write per share and the budget still holds across instances: together they never admit more
 * than the budget in a window (a share left unused at the window's end is simply lost). The next share is asked for
 * while a quarter of this one is left, so requests wait for the database only when a window opens or runs dry.
 */
export class ApiKeyBudget {
  readonly #shares = new Map<string, Share>()
  readonly #shareSize: number
  /** Ask for the next share once this few requests are left of the current one. */
  readonly #askAhead: number

  constructor(
    private readonly db: Kysely<DB>,
    private readonly perMinute: number,
  ) {
    this.#shareSize = Math.min(100, Math.max(1, Math.floor(perMinute / 20)))
    this.#askAhead = Math.floor(this.#shareSize / 4)
  }

  /** Spends one request of the key's budget, or throws RATE_LIMITED with Retry-After. */
  async spend(tenantId: number, apiKeyId: number, nowMs: number): Promise<void> {
    const budgetKey = `api-key:${tenantId}:${apiKeyId}`
    for (;;) {
      let share = this.#shares.get(budgetKey)
      if (share && share.resetsAtMs <= nowMs && !share.asking) {
        this.#shares.delete(budgetKey)
        share = undefined
      }
      if (!share) {
        share = { left: 0, resetsAtMs: 0, spent: false, asking: null }
        this.#shares.set(budgetKey, share)
      }
      if (share.left > 0) {
        share.left -= 1
        // Ahead of need: a failure here only means the request that finds the share empty asks again, and waits.
        if (share.left < this.#askAhead && !share.spent) share.asking ??= this.#ask(budgetKey, share).catch(() => undefined)
        return
      }
      if (share.spent && share.resetsAtMs > nowMs) throw overKeyBudget(share.resetsAtMs - nowMs)
      // One request asks for the next share; the others arriving meanwhile wait for it and then take from it.
      share.asking ??= this.#ask(budgetKey, share)
      await share.asking
    }
  }

  async #ask(budgetKey: string, share: Share): Promise<void> {
    try {
      const { hits, resetsAt } = await reserveKeyBudget(this.db, budgetKey, this.#shareSize)
      const before = hits - this.#shareSize
      const granted = Math.max(0, Math.min(this.#shareSize, this.perMinute - before))
      // What is left of the share asked ahead belongs to the same window; a share of a new window starts afresh.
      const sameWindow = resetsAt.getTime() === share.resetsAtMs
      share.left = sameWindow ? share.left + granted : granted
      share.resetsAtMs = resetsAt.getTime()
      share.spent = granted === 0
    } finally {
      share.asking = null
    }
  }
}

function overKeyBudget(msLeft: number): AppError {
  return new AppError('RATE_LIMITED', 'This API key has used its requests for this minute; try again later.', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(msLeft / 1000))) },
  })
}
