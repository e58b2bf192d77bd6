/**
 * Summarises a V8 .cpuprofile (from `BENCH_CPU_PROF_DIR=... npm run bench:<scenario>`, which starts every service
 * instance with --cpu-prof): the top functions by self time, and self time per area (service code by folder,
 * each node_modules package, Node internals, garbage collection, idle), and the service's own functions by
 * inclusive time (everything they called, e.g. a hook including its queries' compilation and socket writes).
 *
 *   npx tsx bench/tools/cpuprofile-top.ts <file.cpuprofile> [top=25]
 */
import { readFile } from 'node:fs/promises'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

function area(frame: CallFrame): string {
  const { url, functionName } = frame
  if (functionName === '(idle)') return '(idle)'
  if (functionName === '(garbage collector)') return '(garbage collector)'
  if (functionName === '(program)') return '(program: native, not attributed)'
  if (url === '') return '(native)'
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (modules) return `pkg ${modules[1]}`
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/')[0]}`
  const service = /\/(?:dist[^/]*|\.build\/[^/]+)\/(.+)$/.exec(url)
  if (service) {
    const path = service[1]!.split('/')
    return `service ${path.length > 1 ? path.slice(0, -1).join('/') : path[0]}`
  }
  return url
}

const [file, topArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: cpuprofile-top.ts <file.cpuprofile> [top]')
  process.exit(2)
}
const top = Number(topArg ?? 25)
const profile = JSON.parse(await readFile(file, 'utf8')) as Profile
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const selfMicros = new Map<number, number>()
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
}

const total = profile.endTime - profile.startTime
let idle = 0
const byFunction = new Map<string, number>()
const byArea = new Map<string, number>()
for (const [id, micros] of selfMicros) {
  const frame = nodes.get(id)!.callFrame
  if (frame.functionName === '(idle)') idle += micros
  const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|\.build\/[^/]+|dist)\//, '$1/')}:${frame.lineNumber + 1}` : ''
  const key = `${frame.functionName || '(anonymous)'} ${where}`.trim()
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros)
  const group = area(frame)
  byArea.set(group, (byArea.get(group) ?? 0) + micros)
}

// Inclusive time: each sample counts once for every distinct function on its stack.
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
const keyOf = (frame: CallFrame) =>
  `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.replace(/^.*\/(node_modules|\.build\/[^/]+|dist)\//, '$1/')}:${frame.lineNumber + 1}` : ''}`.trim()
const inclusive = new Map<string, number>()
for (let i = 0; i < profile.samples.length; i++) {
  const seen = new Set<string>()
  for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
    const frame = nodes.get(id)!.callFrame
    if (!frame.url || /node_modules|^node:/.test(frame.url)) continue
    seen.add(keyOf(frame))
  }
  for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
}

const busy = total - idle
const pct = (micros: number, of: number) => `${((micros / of) * 100).toFixed(1).padStart(5)} %`
console.log(`${file}: ${(total / 1e6).toFixed(1)} s profiled, main thread busy ${pct(busy, total)}\n`)
console.log(`top ${top} functions by self time (% of busy time):`)
for (const [key, micros] of [...byFunction].filter(([key]) => !key.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${pct(micros, busy)}  ${key}`)
}
console.log('\nself time by area (% of busy time):')
for (const [key, micros] of [...byArea].filter(([key]) => key !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${pct(micros, busy)}  ${key}`)
}
console.log('\nservice (and harness) functions by inclusive time (% of busy time):')
for (const [key, micros] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`  ${pct(micros, busy)}  ${key}`)
}
