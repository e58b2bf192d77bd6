import { randomBytes } from 'node:crypto'
import { tracingChannel } from 'node:diagnostics_channel'
import bcrypt from 'bcrypt'

/**
 * bcrypt hashing through the async API only: it runs on libuv's thread pool, while the sync API would block the
 * event loop for every login (about 60 ms at cost 10).
 */

/**
 * Every bcrypt computation, traced (`start` when it begins, `asyncEnd` when it is done): the slow, CPU-bound step of
 * every route that proves or sets a password, which must never run while the request holds a pooled connection.
 * Subscribers (tests, profilers) can check that as it happens; without one, tracing costs nothing.
 */
export const bcryptWork = tracingChannel<unknown, { operation: 'hash' | 'compare' }>('svc:bcrypt')

// `$2y$` (PHP's crypt_blowfish) is the same algorithm as `$2b$`, which the bcrypt package does not accept by name.
const BCRYPT_HASH = /^\$2([aby])\$(\d{2})\$[./A-Za-z0-9]{53}$/

export function hashPassword(password: string, cost: number): Promise<string> {
  return bcryptWork.tracePromise(() => bcrypt.hash(password, cost), { operation: 'hash' })
}

/** Verifies `$2a$`, `$2b$` and `$2y$` hashes as they are, so hashes carried over from an upgraded database work. */
export function verifyPassword(password: string, hash: string): Promise<boolean> {
  const comparable = hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash
  return bcryptWork.tracePromise(() => bcrypt.compare(password, comparable), { operation: 'compare' })
}

/** True when the hash should be replaced on the next good login: weaker than `cost`, or not the current `$2b$`. */
export function needsRehash(hash: string, cost: number): boolean {
  const match = BCRYPT_HASH.exec(hash)
  if (!match) return true
  return match[1] !== 'b' || Number(match[2]) < cost
}

const dummyHashes = new Map<number, Promise<string>>()

/**
 * Runs a real comparison against a hash of a random secret at `cost`, so a login for an unknown user or tenant
 * takes as long as a wrong password. Always resolves false. The dummy hash is computed on
 * first use per cost and shared by concurrent callers; call this once at start-up to keep that first hash off a
 * request.
 */
export async function verifyAgainstDummy(password: string, cost: number): Promise<false> {
  let dummy = dummyHashes.get(cost)
  if (!dummy) {
    dummy = bcrypt.hash(randomBytes(32).toString('base64'), cost)
    dummyHashes.set(cost, dummy)
    // A failed computation must not stay cached, or every later unknown-user login would fail too.
    dummy.catch(() => dummyHashes.delete(cost))
  }
  const against = await dummy
  await bcryptWork.tracePromise(() => bcrypt.compare(password, against), { operation: 'compare' })
  return false
}
