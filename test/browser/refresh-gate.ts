import type { FastifyRequest } from 'fastify'

const RELEASE_AFTER_MS = 5000

/**
 * Holds POST /v1/refresh requests, once armed, until the expected number has arrived (or a deadline passes), then
 * lets them all go at once. Two tabs' refreshes then surely present the same refresh token, which is the race the
 * reuse grace is for; without the gate the second might leave after the first answered and prove nothing.
 */
export class RefreshGate {
  private expected = 0
  private held: (() => void)[] = []

  /** The next `count` refreshes wait for each other. */
  arm(count: number): void {
    this.expected = count
  }

  readonly onRequest = async (request: FastifyRequest): Promise<void> => {
    if (this.expected === 0 || request.method !== 'POST' || request.url !== '/v1/refresh') return
    await new Promise<void>((resolve) => {
      this.held.push(resolve)
      if (this.held.length >= this.expected) this.release()
      else setTimeout(() => this.release(), RELEASE_AFTER_MS).unref()
    })
  }

  private release(): void {
    this.expected = 0
    for (const resolve of this.held.splice(0)) resolve()
  }
}
