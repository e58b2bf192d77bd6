/**
 * The loopback fake of the live SMS provider (test/fakes/extsms-server.ts) as a process of its own, so its work is
 * accounted apart from the harness. Prints one JSON line {"url"} once listening; runs until SIGTERM.
 *   node --import tsx bench/lib/fake-provider.ts   (env FAKE_API_KEY, FAKE_API_SECRET, FAKE_LATENCY_MS)
 *
 * FAKE_LATENCY_MS holds every answer that long, as a provider across the internet would take.
 */
import { startFakeExtSms } from '../../test/fakes/extsms-server.js'

const fake = await startFakeExtSms({ apiKey: process.env.FAKE_API_KEY ?? '', apiSecret: process.env.FAKE_API_SECRET ?? '' })
const latencyMs = Number(process.env.FAKE_LATENCY_MS ?? 0)
if (latencyMs > 0) fake.fail({ timeoutMs: latencyMs })
console.log(JSON.stringify({ url: fake.url }))

// The fake keeps every accepted message; a benchmark needs none of them, so they are dropped as they come.
setInterval(() => {
  fake.requests.length = 0
  fake.sentMessages.length = 0
  fake.calls.length = 0
}, 1000)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void fake.close().finally(() => process.exit(0)))
}
