import { Writable } from 'node:stream'
import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import { REDACTED_LOG_PATHS } from '../../lib/http/server-options.js'
import { requestLogger } from '../../lib/http/request-logger.js'

/** lib/http/request-logger.ts: a request's logger is pino's child only once it writes. */
describe('request logger', () => {
  function parentAt(level: string) {
    const lines: Record<string, unknown>[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
        done()
      },
    })
    const parent = pino({ level, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } }, stream)
    return { parent, lines, child: vi.spyOn(parent, 'child') }
  }
  const flushed = () => new Promise((resolve) => setImmediate(resolve))

  it('makes no child for lines its level leaves out, and one child for the first line it writes', async () => {
    const { parent, lines, child } = parentAt('warn')
    const log = requestLogger(parent, { reqId: 'r-1' }, {})
    log.info({ what: 'skipped' }, 'incoming request')
    log.debug('nothing')
    expect(child).not.toHaveBeenCalled()
    log.warn({ req: { headers: { authorization: 'Bearer secret-token' } } }, 'first')
    log.error(new Error('boom'), 'second')
    await flushed()
    expect(child).toHaveBeenCalledTimes(1)
    expect(lines.map((line) => [line.reqId, line.msg])).toEqual([
      ['r-1', 'first'],
      ['r-1', 'second'],
    ])
    // Redaction still applies to what the child writes.
    expect(JSON.stringify(lines)).not.toContain('secret-token')
    expect(lines[0]).toMatchObject({ req: { headers: { authorization: '[redacted]' } } })
  })

  it('follows the parent’s level as it changes, and its own once set', async () => {
    const { parent, lines } = parentAt('warn')
    const log = requestLogger(parent, { reqId: 'r-2' }, {})
    expect(log.level).toBe('warn')
    parent.level = 'info'
    log.info('now written')
    log.level = 'error'
    log.warn('left out')
    await flushed()
    expect(lines.map((line) => line.msg)).toEqual(['now written'])
  })

  it('gives a route with a level of its own pino’s child at once', () => {
    const { parent, child } = parentAt('warn')
    const log = requestLogger(parent, { reqId: 'r-3' }, { level: 'debug' })
    expect(child).toHaveBeenCalledTimes(1)
    expect(log.level).toBe('debug')
  })

  it('has every method Fastify asks of a logger', () => {
    const { parent } = parentAt('warn')
    const log = requestLogger(parent, { reqId: 'r-4' }, {})
    for (const method of ['info', 'error', 'debug', 'fatal', 'warn', 'trace', 'child', 'silent'] as const) {
      expect(typeof log[method]).toBe('function')
    }
    expect(log.child({ extra: 1 }).level).toBe('warn')
  })
})
