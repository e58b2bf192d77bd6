/**
 * Where a growing resident set goes: starts the service, sends GET /v1/me load, takes a V8 heap snapshot after
 * the first batch and another after the rest, and prints the constructors whose live count or size grew most.
 * A leak shows as a count that grows with the requests; a heap that only sizes itself up does not.
 *
 *   npx tsx bench/tools/heap-growth.ts [first=20000] [rest=200000]
 */
import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../lib/cleanup.js'
import { BenchContext } from '../lib/context.js'
import { log, runLoad } from '../lib/load.js'
import { meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, seedTenant } from '../lib/seed.js'
import { startService, type RunningProcess } from '../lib/service.js'

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
  nodes: number[]
  strings: string[]
}

type Census = Map<string, { count: number; size: number }>

/** Live objects by type and constructor name. */
function census(snapshot: Snapshot): Census {
  const fields = snapshot.snapshot.meta.node_fields
  const width = fields.length
  const typeAt = fields.indexOf('type')
  const nameAt = fields.indexOf('name')
  const sizeAt = fields.indexOf('self_size')
  const types = snapshot.snapshot.meta.node_types[0]
  const result: Census = new Map()
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt]!]!
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snapshot.strings[snapshot.nodes[i + nameAt]!]!
    const key = `${type}:${name.slice(0, 60)}`
    const entry = result.get(key) ?? { count: 0, size: 0 }
    entry.count += 1
    entry.size += snapshot.nodes[i + sizeAt]!
    result.set(key, entry)
  }
  return result
}

async function snapshotOf(service: RunningProcess, dir: string, taken: number): Promise<Census> {
  process.kill(service.pid, 'SIGUSR2')
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const files = (await readdir(dir)).filter((file) => file.endsWith('.heapsnapshot'))
    if (files.length > taken) {
      const file = join(dir, files.sort()[taken]!)
      // Written in one go once V8 is done; wait until it parses.
      for (;;) {
        try {
          return census(JSON.parse(await readFile(file, 'utf8')) as Snapshot)
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 1000))
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error('no heap snapshot within 120 s')
}

await main(async () => {
  const first = Number(process.argv[2] ?? 20_000)
  const rest = Number(process.argv[3] ?? 200_000)
  const ctx = new BenchContext()
  const database = await ctx.database()
  const dir = await mkdtemp(join(tmpdir(), 'svc-heap-'))
  const service = await startService({
    databaseUrl: database.url,
    jwtSecret: ctx.jwtSecret,
    name: 'service-heap',
    nodeOptions: ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
  })
  try {
    const tenant = await seedTenant(service.url, database.owner, 64)
    const sessions = await loginStaff(service.url, tenant)
    const requests = meRequests(sessions)
    const spec = (amount: number) => ({ url: service.url, connections: 10, amount, ...requests })
    await runLoad(spec(first))
    const before = await snapshotOf(service, dir, 0)
    log(`snapshot after ${first} requests; RSS ${((await service.rssKiB()) / 1024).toFixed(1)} MiB`)
    await runLoad(spec(rest))
    const after = await snapshotOf(service, dir, 1)
    log(`snapshot after ${first + rest} requests; RSS ${((await service.rssKiB()) / 1024).toFixed(1)} MiB`)
    const total = (census: Census) => [...census.values()].reduce((sum, entry) => sum + entry.size, 0)
    log(`live heap ${(total(before) / 1048576).toFixed(1)} MiB -> ${(total(after) / 1048576).toFixed(1)} MiB`)
    const growth = [...after].map(([key, entry]) => {
      const was = before.get(key) ?? { count: 0, size: 0 }
      return { key, count: entry.count - was.count, size: entry.size - was.size, now: entry.count }
    })
    growth.sort((a, b) => b.size - a.size)
    for (const row of growth.slice(0, 30)) log(`${String(row.size).padStart(10)} B ${String(row.count).padStart(8)} objects (now ${row.now})  ${row.key}`)
  } finally {
    await service.stop()
    await rm(dir, { recursive: true, force: true })
  }
})
