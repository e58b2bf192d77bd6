/**
 * A request timed from this process, for a load autocannon cannot describe: a client whose slowest request is the
 * figure (a writer while a month is removed, bench/lib/month-removal.ts).
 */

export interface TimedRequest {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
}

/** Milliseconds one request took, answer read to the end; an answer that is not 2xx comes back `ok: false`. */
export async function timeRequest(url: string, request: TimedRequest): Promise<{ ms: number; ok: boolean; status: number }> {
  const started = performance.now()
  const response = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body })
  await response.arrayBuffer()
  return { ms: performance.now() - started, ok: response.ok, status: response.status }
}
