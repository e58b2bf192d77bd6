/**
 * The loopback fake of the live SMS provider (test/support/fakes/extsms-server.ts) as a process of its own, so its work is
 * accounted apart from the harness. Prints one JSON line {"url"} once listening; runs until SIGTERM.
 *   node --import tsx bench/lib/fake-provider.ts   (env FAKE_API_KEY, FAKE_API_SECRET, FAKE_LATENCY_MS)
 *
 * FAKE_LATENCY_MS holds every answer that long after its call took effect (each phase of the group API: create, add,
 * send, read back), as a provider across the internet would take.
 */
import { startFakeExtSms } from '../../test/support/fakes/extsms-server.js'
import { BENCH_KAKAO_CHANNEL, BENCH_KAKAO_CONTENT, BENCH_KAKAO_TEMPLATE } from './kakao-template.js'

const fake = await startFakeExtSms({
  apiKey: process.env.FAKE_API_KEY ?? '',
  apiSecret: process.env.FAKE_API_SECRET ?? '',
  latencyMs: Number(process.env.FAKE_LATENCY_MS ?? 0),
})
// The AlimTalk template bench/lib/seed.ts's notices are sent with (the dispatch benchmark of KakaoTalk notices).
fake.kakao.addChannel(BENCH_KAKAO_CHANNEL)
fake.kakao.putTemplate({ templateId: BENCH_KAKAO_TEMPLATE, channelId: BENCH_KAKAO_CHANNEL, name: 'Bench', content: BENCH_KAKAO_CONTENT, status: 'APPROVED' })
console.log(JSON.stringify({ url: fake.url }))

// The fake keeps every call, message and group; a benchmark needs none of them, so they are dropped as they come.
// A group still PENDING stays: the dispatcher adds to it and sends it next. A sent one is never read back here
// (every call is answered well within the adapter's time limit, so no outcome is left unknown).
setInterval(() => {
  fake.requests.length = 0
  fake.received.length = 0
  fake.sentMessages.length = 0
  fake.calls.length = 0
  for (const [groupId, group] of fake.groups) if (group.status !== 'PENDING') fake.groups.delete(groupId)
}, 1000)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void fake.close().finally(() => process.exit(0)))
}
