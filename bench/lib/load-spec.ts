/** What one load run does; written to a file and read by the load-generator process (load-worker.ts). */
export interface LoadSpec {
  url: string
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  path: string
  /**
   * Paths taken in turn instead of `path`, one request after the other (e.g. messages spread over months): each
   * connection starts at its own place in the list.
   */
  paths?: string[]
  connections: number
  /** Seconds; or `amount` requests in total. */
  duration?: number
  amount?: number
  headers?: Record<string, string>
  body?: string
  /** A file holding the body (large payloads), read once by the worker. */
  bodyFile?: string
  /** Per-connection headers, assigned round-robin to connections (e.g. one bearer token per simulated user). */
  connectionHeaders?: Record<string, string>[]
  /** Per-connection bodies, assigned round-robin (e.g. one login per simulated user). */
  connectionBodies?: string[]
  /** A fresh random UUID in this header on every request (Idempotency-Key). */
  uniqueHeader?: string
  /**
   * Cookie chains: each connection starts with one of these cookie values (distinct sessions) and replaces it
   * with the `Set-Cookie` of the same name from every answer, as a browser does on refresh rotation.
   */
  cookieChain?: { name: string; initial: string[] }
  timeoutSeconds?: number
}

export interface LoadResult {
  /** 2xx answers per second over the run. */
  rps: number
  /** Latency in milliseconds over every answer. */
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
  ok: number
  non2xx: number
  errors: number
  timeouts: number
  durationSeconds: number
  statusCodes: Record<string, number>
  /** The load generator's own CPU during the run, % of one core. */
  loadGeneratorCpu: number
}
