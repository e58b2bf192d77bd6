/**
 * Requests timed one by one from this process, for loads autocannon cannot describe: a path that changes on every
 * request (message ids spread over months), or a client whose slowest request is the figure (a writer while a
 * month is removed).
 */
import { median } from './load.js'

export interface TimedRequest {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  body?: string
}

export interface LoopFigures {
  requests: number
  rps: number
  p50: number
  p99: number
  max: number
  /** Answers that were not 2xx. */
  failures: number
}

/** Milliseconds one request took, answer read to the end; throws nothing, a failed answer counts in `failed`. */
export async function timeRequest(url: string, request: TimedRequest): Promise<{ ms: number; ok: boolean; status: number }> {
  const started = performance.now()
  const response = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body })
  await response.arrayBuffer()
  return { ms: performance.now() - started, ok: response.ok, status: response.status }
}

export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!
}

/** `total` requests from `connections` concurrent loops, request i being `next(i)`. */
export async function requestLoop(url: string, connections: number, total: number, next: (i: number) => TimedRequest): Promise<LoopFigures> {
  const latencies: number[] = []
  let failures = 0
  let issued = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (issued < total) {
        const { ms, ok } = await timeRequest(url, next(issued++))
        latencies.push(ms)
        if (!ok) failures++
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50: median(latencies),
    p99: percentile(latencies, 0.99),
    max: Math.max(...latencies),
    failures,
  }
}
