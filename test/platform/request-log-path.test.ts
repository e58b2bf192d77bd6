import { describe, expect, it } from 'vitest'
import { listOptOut } from '../advertising/advertising-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'

/**
 * A phone number in a path (`DELETE /v1/sms/opt-outs/{phone}`) is a guardian's number like one in a body: request
 * lines show it masked, as answers do, however the client wrote and encoded it.
 */
describe('request logs and phone numbers in paths', () => {
  const lines: string[] = []

  const app = useTestApp({ env: { LOG_LEVEL: 'debug' }, onLine: (line) => lines.push(line) })

  const NUMBER = '010-4321-8765'
  const MASKED = '010-****-8765'
  const WRITINGS = [
    NUMBER,
    '01043218765',
    '+821043218765',
    '%2B821043218765',
    '010%2D4321%2D8765',
    encodeURIComponent('010 4321 8765'),
    encodeURIComponent('(010) 4321-8765'),
  ]

  const linesOf = (reqId: string) => lines.filter((line) => (JSON.parse(line) as { reqId?: string }).reqId === reqId)

  /** The number's digits anywhere in a line, however written: percent-decoded, separators dropped. */
  function carriesTheNumber(line: string): boolean {
    let text = line
    try {
      text = decodeURIComponent(line)
    } catch {
      // a line with a stray `%` is searched as written
    }
    return text.replace(/[\s().+\-]|%2D|%20/gi, '').includes('43218765')
  }

  it.each(WRITINGS)('DELETE /v1/sms/opt-outs/%s logs the number masked, never whole', async (written) => {
    const { manager } = await academy(app.current)
    await listOptOut(app.current, manager, NUMBER)
    const reqId = `opt-out-path-${WRITINGS.indexOf(written)}`
    const response = await app.current.inject({
      method: 'DELETE',
      url: `/v1/sms/opt-outs/${written}`,
      headers: { ...manager.headers, 'x-request-id': reqId },
    })
    // The route read the number: the log is about a real removal, not a refused path.
    expect(response.statusCode).toBe(204)
    const logged = linesOf(reqId)
    expect(logged.some((line) => line.includes(`"url":"/v1/sms/opt-outs/${MASKED}"`))).toBe(true)
    expect(lines.filter(carriesTheNumber)).toEqual([])
  })

  it('masks a number the route refuses as written', async () => {
    const { manager } = await academy(app.current)
    const response = await app.current.inject({
      method: 'DELETE',
      url: '/v1/sms/opt-outs/010+4321+8765',
      headers: { ...manager.headers, 'x-request-id': 'refused-writing' },
    })
    expect(response.statusCode).toBe(400)
    expect(linesOf('refused-writing').join('\n')).toContain(`"url":"/v1/sms/opt-outs/${MASKED}"`)
    expect(lines.filter(carriesTheNumber)).toEqual([])
  })

  it('masks a number on a path no route serves, and in a query parameter of any name', async () => {
    await app.current.inject({ method: 'GET', url: `/v1/sms/opt-out/${NUMBER}?to=%2B821043218765&page=1`, headers: { 'x-request-id': 'stray-path' } })
    const logged = linesOf('stray-path').join('\n')
    expect(logged).toContain(`/v1/sms/opt-out/${MASKED}?to=${MASKED}&page=1`)
    expect(lines.filter(carriesTheNumber)).toEqual([])
  })

  it('keeps integer ids readable', async () => {
    await app.current.inject({ method: 'GET', url: '/v1/sms/history/2026120000000042', headers: { 'x-request-id': 'id-path' } })
    expect(linesOf('id-path').join('\n')).toContain('"url":"/v1/sms/history/2026120000000042"')
  })
})
