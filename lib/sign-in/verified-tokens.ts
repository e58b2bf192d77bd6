/**
 * Tokens whose signature and registered claims have been checked, by their exact text, until they expire. A client
 * presents one access token for many requests; an Ed25519 check costs about 100 µs of CPU and a map lookup almost
 * nothing, so each instance checks a token's signature once. Only a token verified by this process's key set is
 * ever stored, under the whole text, so a changed byte misses; the key set is fixed for the life of the process,
 * so removing a key (a restart) also empties the cache. Revocation is not cached: the request's database statement
 * checks it every time.
 */
export class VerifiedTokens<T> {
  readonly #entries = new Map<string, { value: T; expiresAtMs: number }>()

  constructor(private readonly capacity: number) {}

  get(token: string, nowMs: number): T | undefined {
    const entry = this.#entries.get(token)
    if (!entry) return undefined
    if (entry.expiresAtMs > nowMs) return entry.value
    this.#entries.delete(token)
    return undefined
  }

  /** Bounded: beyond capacity the oldest entry goes, so a flood of distinct valid tokens costs memory only up to it. */
  set(token: string, value: T, expiresAtMs: number): void {
    if (this.capacity <= 0) return
    if (this.#entries.size >= this.capacity) {
      const oldest = this.#entries.keys().next()
      if (!oldest.done) this.#entries.delete(oldest.value)
    }
    this.#entries.set(token, { value, expiresAtMs })
  }

  get size(): number {
    return this.#entries.size
  }
}
