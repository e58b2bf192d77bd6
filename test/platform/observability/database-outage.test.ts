import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { createDatabaseOutage } from '../../../lib/observability/database-outage.js'

type Line = Record<string, unknown>

function tracker() {
  const lines: Line[] = []
  let clock = 1000
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) })
  const outage = createDatabaseOutage(log, () => clock)
  return { outage, lines, advance: (ms: number) => (clock += ms) }
}

const refused = Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET', stack: 'Error: at somewhere' })

describe('database outage tracker', () => {
  it('warns at the first refusal, counts the rest by source, and tells the end once with how long it lasted', () => {
    const { outage, lines, advance } = tracker()
    outage.reachable()
    expect(lines).toEqual([])
    outage.refusedRequest(refused)
    advance(250)
    outage.refusedRequest(refused)
    outage.failedWork('dispatch', refused)
    outage.failedWork('dispatch', refused)
    outage.failedWork('readiness', refused)
    expect(outage.open).toBe(true)
    advance(750)
    outage.reachable()
    outage.reachable()
    expect(outage.open).toBe(false)
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: 'database unreachable', source: 'request', code: 'ECONNRESET', reason: 'Connection terminated unexpectedly' }),
      expect.objectContaining({ level: 30, msg: 'database reachable again', durationMs: 1000, refusedRequests: 2, failedWork: { dispatch: 2, readiness: 1 } }),
    ])
    expect(JSON.stringify(lines)).not.toContain('stack')
  })

  it('absorbs into the outage only an error that means the database is out of reach; any other is left to the caller', () => {
    const { outage, lines } = tracker()
    expect(outage.absorbs('maintenance', new Error('relation "sms_usage" does not exist'))).toBe(false)
    expect(outage.open).toBe(false)
    expect(lines).toEqual([])
    expect(outage.absorbs('maintenance', refused)).toBe(true)
    expect(outage.absorbs('maintenance', refused)).toBe(true)
    outage.reachable()
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'database unreachable', source: 'maintenance' }),
      expect.objectContaining({ msg: 'database reachable again', failedWork: { maintenance: 2 } }),
    ])
  })

  it('names the background work that found the outage first', () => {
    const { outage, lines } = tracker()
    outage.failedWork('webhooks', refused)
    outage.refusedRequest(refused)
    expect(lines[0]).toMatchObject({ msg: 'database unreachable', source: 'webhooks' })
  })

  it('opens no new outage for a request that began before the database came back', () => {
    const { outage, lines, advance } = tracker()
    outage.refusedRequest(refused)
    advance(100)
    outage.reachable()
    advance(50)
    // Started 200 ms ago, while the outage was still on: old news.
    outage.refusedRequest(refused, 200)
    expect(outage.open).toBe(false)
    // Started after the recovery: a new outage.
    outage.refusedRequest(refused, 10)
    expect(outage.open).toBe(true)
    expect(lines.filter((line) => line.msg === 'database unreachable')).toHaveLength(2)
  })
})
