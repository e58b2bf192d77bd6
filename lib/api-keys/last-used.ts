import type { Kysely } from 'kysely'
import { touchApiKey } from '../../db/repos/api-keys/api-keys.js'
import type { DB } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'

/**
 * Keeps each key's `lastUsedAt` without a write per request: an instance writes a key's row at most once a minute
 * (it remembers when it last did), and the write itself changes nothing when any instance wrote less than a minute
 * before (touchApiKey), so the row changes at most once a minute whatever the number of instances. The write runs
 * after the answer, in a transaction of its own, and a failure only delays the next mark.
 */
export class LastUsedMarks {
  readonly #markedAtMs = new Map<number, number>()

  constructor(private readonly db: Kysely<DB>) {}

  /** The write to run for this use, or null when this instance wrote the key less than a minute ago. */
  mark(tenantId: number, apiKeyId: number, now: Date): (() => Promise<void>) | null {
    const last = this.#markedAtMs.get(apiKeyId)
    if (last !== undefined && now.getTime() - last < 60_000) return null
    this.#markedAtMs.set(apiKeyId, now.getTime())
    return async () => {
      await withTenant(this.db, tenantId, (trx) => touchApiKey(trx, apiKeyId, now))
    }
  }
}
