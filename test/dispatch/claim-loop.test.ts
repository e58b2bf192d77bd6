import pino from 'pino'
import { Writable } from 'node:stream'
import { describe, expect, it, vi } from 'vitest'
import type { Claim } from '../../db/repos/dispatch/dispatch.js'
import type { AttemptKind } from '../../lib/dispatch/attempt.js'
import { ClaimLoop } from '../../lib/dispatch/claim-loop.js'
import { unlessOutage } from '../../lib/dispatch/unless-outage.js'
import { WorkerPool } from '../../lib/dispatch/worker-pool.js'

// The claim loop and the worker pool on their own: due work is a list in memory and each attempt ends when the test
// says, so what is claimed when, and how many attempts run at once, can be watched step by step. The database's part
// (claims, hand-over, recording) is tested against PostgreSQL in test/dispatch/.

interface Bench {
  loop: ClaimLoop
  stopping: AbortController
  /** The count asked for by each claim, in order. */
  asked: number[]
  /** Attempts started and not yet ended, by message id. */
  running: Map<number, (kind: AttemptKind | Error) => void>
  mostAtOnce: () => number
  lines: Record<string, unknown>[]
  /** Ends the attempt of message `smsId`. */
  end(smsId: number, kind?: AttemptKind | Error): void
}

function bench(options: { due: number; workers: number; batchSize: number; claimGate?: () => Promise<void> }): Bench {
  const due = Array.from({ length: options.due }, (_, index): Claim => ({ tenantId: 1, smsId: index + 1, claimToken: `token-${index + 1}` }))
  const lines: Record<string, unknown>[] = []
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
        done()
      },
    }),
  )
  const running = new Map<number, (kind: AttemptKind | Error) => void>()
  let mostAtOnce = 0
  const pool = new WorkerPool({
    size: options.workers,
    attempt: (claim) =>
      new Promise<AttemptKind | null>((resolve, reject) => {
        running.set(claim.smsId, (kind) => (kind instanceof Error ? reject(kind) : resolve(kind)))
        mostAtOnce = Math.max(mostAtOnce, running.size)
      }),
    log,
    unlessOutage: unlessOutage(undefined),
  })
  const asked: number[] = []
  const stopping = new AbortController()
  const loop = new ClaimLoop({
    pool,
    claimDue: async (count) => {
      asked.push(count)
      await options.claimGate?.()
      return due.splice(0, count)
    },
    batchSize: options.batchSize,
    stopping: stopping.signal,
    log,
    unlessOutage: unlessOutage(undefined),
  })
  return {
    loop,
    stopping,
    asked,
    running,
    lines,
    mostAtOnce: () => mostAtOnce,
    end(smsId, kind = 'accepted') {
      const finish = running.get(smsId)
      if (!finish) throw new Error(`no attempt of ${smsId} is running`)
      running.delete(smsId)
      finish(kind)
    },
  }
}

const batchLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === 'dispatch batch')

describe('the dispatch claim loop and its workers', () => {
  it('claims only for free workers, and claims again for each worker that frees while more may be due', async () => {
    const bed = bench({ due: 5, workers: 2, batchSize: 10 })
    bed.loop.kick()
    await vi.waitFor(() => expect([...bed.running.keys()]).toEqual([1, 2]))
    expect(bed.asked).toEqual([2])

    bed.end(1)
    await vi.waitFor(() => expect([...bed.running.keys()]).toEqual([2, 3]))
    expect(bed.asked).toEqual([2, 1])
    for (const smsId of [2, 3, 4, 5]) {
      await vi.waitFor(() => expect(bed.running.has(smsId)).toBe(true))
      bed.end(smsId)
    }
    await bed.loop.pass()
    expect(bed.mostAtOnce()).toBe(2)
    expect(bed.running.size).toBe(0)
  })

  it('folds kicks that arrive while a claim runs into one more claim', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const bed = bench({ due: 0, workers: 4, batchSize: 10, claimGate: () => gate })
    bed.loop.kick()
    bed.loop.kick()
    bed.loop.kick()
    expect(bed.asked).toEqual([4])
    // A pass started while the claim still runs is folded in too.
    const pass = bed.loop.pass()
    open()
    expect(await pass).toBe(0)
    expect(bed.asked).toEqual([4, 4])
  })

  it('in a pass claims at most a batch, and resolves once every attempt it started has ended', async () => {
    const bed = bench({ due: 5, workers: 2, batchSize: 3 })
    let claimed: number | null = null
    const pass = bed.loop.pass().then((count) => (claimed = count))
    for (const smsId of [1, 2, 3]) {
      await vi.waitFor(() => expect(bed.running.has(smsId)).toBe(true))
      expect(claimed).toBeNull()
      bed.end(smsId, smsId === 2 ? 'retryable' : 'accepted')
    }
    await pass
    expect(claimed).toBe(3)
    expect(bed.asked).toEqual([2, 1])
    expect(batchLines(bed.lines).map(({ claimed, sent, retrying }) => ({ claimed, sent, retrying }))).toEqual([
      { claimed: 2, sent: 1, retrying: 1 },
      { claimed: 1, sent: 1, retrying: 0 },
    ])
  })

  it('waits in a pass for the attempts a kick started before it', async () => {
    const bed = bench({ due: 1, workers: 2, batchSize: 10 })
    bed.loop.kick()
    await vi.waitFor(() => expect(bed.running.has(1)).toBe(true))
    let done = false
    const pass = bed.loop.pass().then(() => (done = true))
    // The pass claims for the one free worker, and finds nothing more.
    await vi.waitFor(() => expect(bed.asked).toEqual([2, 1]))
    expect(done).toBe(false)
    bed.end(1)
    await pass
  })

  it('frees the worker of an attempt that failed, and counts it failed in the batch line', async () => {
    const bed = bench({ due: 2, workers: 1, batchSize: 10 })
    const pass = bed.loop.pass()
    await vi.waitFor(() => expect(bed.running.has(1)).toBe(true))
    bed.end(1, new Error('connection lost'))
    await vi.waitFor(() => expect(bed.running.has(2)).toBe(true))
    bed.end(2)
    expect(await pass).toBe(2)
    expect(bed.lines.find((line) => line.level === 50)?.msg).toBe('dispatch of a message failed; its lease lapses and the next holder takes it over')
    expect(batchLines(bed.lines).map(({ failed, sent }) => ({ failed, sent }))).toEqual([
      { failed: 1, sent: 0 },
      { failed: 0, sent: 1 },
    ])
  })

  it('starts no claim once stopping', async () => {
    const bed = bench({ due: 3, workers: 2, batchSize: 10 })
    bed.stopping.abort()
    bed.loop.kick()
    expect(await bed.loop.pass()).toBe(0)
    expect(bed.asked).toEqual([])
  })
})
