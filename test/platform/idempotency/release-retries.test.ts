import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { Claim } from '../../../lib/idempotency/claims.js'
import { createReleaseRetries } from '../../../lib/idempotency/release-retries.js'
import { until } from '../../support/auth-fixtures.js'

// The scheduling of background releases, with a release function that plays a database out of reach; what a real
// outage does to a real key is in test/platform/idempotency/idempotency-outage.test.ts.
const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })
const claimAt = (stamp: Date): Claim => ({ scope: { tenantId: 1, userId: 2, route: 'POST /v1/sms/send', key: 'k' }, stamp })
const quiet = pino({ level: 'silent' })

function releaser(failures: number) {
  const calls: number[] = []
  return {
    calls,
    release: async () => {
      calls.push(Date.now())
      if (calls.length <= failures) throw unreachable()
    },
  }
}

describe('background release of idempotency keys', () => {
  it('keeps trying while the database is out of reach, and stops once the release went through', async () => {
    const fake = releaser(3)
    const retries = createReleaseRetries({ release: fake.release, claimSeconds: 30, log: quiet, firstDelayMs: 5, maxDelayMs: 20 })
    await retries.release(claimAt(new Date()))
    expect(fake.calls).toHaveLength(1)
    await until(() => fake.calls.length === 4 && retries.pending === 0)
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(fake.calls).toHaveLength(4)
  })

  it('gives up once the claim seconds have passed: the takeover rule frees the key from then on', async () => {
    const fake = releaser(Number.POSITIVE_INFINITY)
    const retries = createReleaseRetries({ release: fake.release, claimSeconds: 5, log: quiet, firstDelayMs: 5, maxDelayMs: 10 })
    // Claimed 4.9 seconds ago: 100 ms of tries are left.
    await retries.release(claimAt(new Date(Date.now() - 4900)))
    await until(() => retries.pending === 0)
    const tries = fake.calls.length
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(fake.calls.length).toBe(tries)
    expect(tries).toBeGreaterThan(1)
  })

  it('leaves no timer behind when stopped', async () => {
    const fake = releaser(Number.POSITIVE_INFINITY)
    const retries = createReleaseRetries({ release: fake.release, claimSeconds: 30, log: quiet, firstDelayMs: 20 })
    await retries.release(claimAt(new Date()))
    await retries.release(claimAt(new Date()))
    expect(retries.pending).toBe(2)
    await retries.stop()
    expect(retries.pending).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(fake.calls).toHaveLength(2)
  })

  it('works through the waiting keys one at a time, and ends a pass at its first failure', async () => {
    let down = true
    let running = 0
    let mostAtOnce = 0
    const tried: string[] = []
    const release = async (claim: Claim) => {
      running++
      mostAtOnce = Math.max(mostAtOnce, running)
      tried.push(claim.scope.key)
      await new Promise((resolve) => setTimeout(resolve, 2))
      running--
      if (down) throw unreachable()
    }
    const retries = createReleaseRetries({ release, claimSeconds: 30, log: quiet, firstDelayMs: 5, maxDelayMs: 10 })
    const claims = ['a', 'b', 'c'].map((key) => ({ ...claimAt(new Date()), scope: { ...claimAt(new Date()).scope, key } }))
    // Three requests end at once, each trying its own key on its way out.
    await Promise.all(claims.map((claim) => retries.release(claim)))
    tried.length = 0
    mostAtOnce = 0
    await until(() => tried.length >= 3)
    // The database still out of reach: every pass stops at the first key.
    expect(new Set(tried)).toEqual(new Set(['a']))
    down = false
    await until(() => retries.pending === 0)
    expect(tried.slice(-3)).toEqual(['a', 'b', 'c'])
    expect(mostAtOnce).toBe(1)
  })

  it('rethrows any other failure at once and schedules nothing', async () => {
    const retries = createReleaseRetries({
      release: () => Promise.reject(new Error('a bug, not an outage')),
      claimSeconds: 30,
      log: quiet,
    })
    await expect(retries.release(claimAt(new Date()))).rejects.toThrow('a bug, not an outage')
    expect(retries.pending).toBe(0)
  })

  it('warns once per key, without a stack', async () => {
    const lines: Array<Record<string, unknown>> = []
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) })
    const fake = releaser(4)
    const retries = createReleaseRetries({ release: fake.release, claimSeconds: 30, log, firstDelayMs: 5, maxDelayMs: 10 })
    await retries.release(claimAt(new Date()))
    await until(() => fake.calls.length === 5 && retries.pending === 0)
    const warnings = lines.filter((line) => (line.level as number) >= 40)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ key: 'k', tenantId: 1, code: 'ECONNREFUSED', reason: 'connect ECONNREFUSED 127.0.0.1:1' })
    expect(JSON.stringify(lines)).not.toContain('stack')
  })
})
