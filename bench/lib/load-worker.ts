/**
 * The load generator: one autocannon run in its own process (never in the process being measured), configured by
 * a LoadSpec file; writes a LoadResult file. Usage: node --import tsx bench/lib/load-worker.ts spec.json out.json
 */
import autocannon from 'autocannon'
import { randomUUID } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import type { LoadResult, LoadSpec } from './load-spec.js'

type Client = Parameters<NonNullable<autocannon.Options['setupClient']>>[0]
type Request = autocannon.Request
type Headers = NonNullable<Request['headers']>

function cookieFrom(headers: Headers, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== 'set-cookie') continue
    for (const cookie of Array.isArray(value) ? value : [value ?? '']) {
      const [pair] = cookie.split(';', 1)
      const separator = pair!.indexOf('=')
      if (pair!.slice(0, separator).trim() === name) return pair!.slice(separator + 1)
    }
  }
  return undefined
}

class Latencies {
  private values = new Float64Array(1 << 16)
  private count = 0
  private sorted = false

  add(value: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.count++] = value
    this.sorted = false
  }

  percentile(p: number): number {
    if (this.count === 0) return Number.NaN
    const view = this.values.subarray(0, this.count)
    if (!this.sorted) {
      view.sort()
      this.sorted = true
    }
    return view[Math.min(this.count - 1, Math.max(0, Math.ceil((p / 100) * this.count) - 1))]!
  }

  mean(): number {
    let sum = 0
    for (let i = 0; i < this.count; i++) sum += this.values[i]!
    return this.count ? sum / this.count : Number.NaN
  }
}

async function main(): Promise<void> {
  const [specPath, outPath] = process.argv.slice(2)
  if (!specPath || !outPath) throw new Error('usage: load-worker.ts spec.json result.json')
  const spec = JSON.parse(await readFile(specPath, 'utf8')) as LoadSpec
  const body = spec.bodyFile ? await readFile(spec.bodyFile, 'utf8') : spec.body
  const baseHeaders = { ...spec.headers }
  let nextClient = 0

  const setupClient = (client: Client) => {
    const index = nextClient++
    const headers = { ...baseHeaders, ...spec.connectionHeaders?.[index % spec.connectionHeaders.length] }
    const clientBody = spec.connectionBodies?.[index % spec.connectionBodies.length] ?? body
    const chain = spec.cookieChain
    let cookie = chain?.initial[index % chain.initial.length]
    const paths = spec.paths
    let nextPath = paths ? Math.floor((index * paths.length) / spec.connections) : 0
    const dynamic = spec.uniqueHeader !== undefined || chain !== undefined || paths !== undefined
    const request: Request = { method: spec.method, path: spec.path, headers, ...(clientBody !== undefined && { body: clientBody }) }
    if (dynamic) {
      // The state lives in this closure: autocannon resets its own per-request context after every request.
      request.setupRequest = (req: Request): Request => {
        const next: Headers = { ...headers }
        if (spec.uniqueHeader) next[spec.uniqueHeader] = randomUUID()
        if (chain) next.cookie = `${chain.name}=${cookie}`
        const path = paths ? paths[nextPath++ % paths.length]! : req.path
        return { ...req, path, headers: next }
      }
    }
    if (chain) {
      request.onResponse = (_status: number, _body: string, _context: object, responseHeaders: Headers | undefined) => {
        const rotated = responseHeaders ? cookieFrom(responseHeaders, chain.name) : undefined
        if (rotated) cookie = rotated
      }
    }
    client.setRequests([request])
  }

  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  // autocannon's own histogram keeps whole milliseconds; sub-millisecond latencies need the raw values.
  const latencies = new Latencies()
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        pipelining: 1,
        timeout: spec.timeoutSeconds ?? 30,
        ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.duration ?? 10 }),
        setupClient,
      },
      (error, finished) => (error ? reject(error as Error) : resolve(finished)),
    )
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.add(responseTime))
  })
  const cpu = process.cpuUsage(cpuBefore)
  const loadGeneratorCpu = ((cpu.user + cpu.system) / 1000 / (performance.now() - started)) * 100
  const statusCodes: Record<string, number> = {}
  for (const [code, stats] of Object.entries((result as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {})) {
    statusCodes[code] = stats.count
  }
  const ok = result['2xx']
  const durationSeconds = result.duration
  const out: LoadResult = {
    rps: ok / durationSeconds,
    p50: latencies.percentile(50),
    p90: latencies.percentile(90),
    p99: latencies.percentile(99),
    max: latencies.percentile(100),
    mean: latencies.mean(),
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds,
    statusCodes,
    loadGeneratorCpu,
  }
  await writeFile(outPath, JSON.stringify(out))
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
