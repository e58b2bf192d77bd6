import { describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'

/**
 * Search text is what staff typed about guardians and students; a credential in a query string (a link carrying a
 * token) is a credential. Request lines keep the path and the other parameters, and drop those values.
 */
describe('request logs and query strings', () => {
  const lines: string[] = []

  const app = useTestApp({ env: { LOG_LEVEL: 'debug' }, onLine: (line) => lines.push(line) })

  // The request's lines, without the timings: a duration's digits once held the 9876 this file looks for.
  const logged = (reqId: string) =>
    lines
      .map((line) => JSON.parse(line) as { reqId?: string; time?: number; responseTime?: number })
      .filter((line) => line.reqId === reqId)
      .map(({ time: _time, responseTime: _responseTime, ...rest }) => JSON.stringify(rest))
      .join('\n')

  it('never carry the search text of q', async () => {
    const { owner } = await academy(app.current)
    const search = 'Kim Minji 010-9876-5432 fees overdue'
    const response = await app.current.inject({
      method: 'GET',
      url: `/v1/sms/history?size=5&q=${encodeURIComponent(search)}`,
      headers: { ...owner.headers, 'x-request-id': 'search-log-1' },
    })
    expect(response.statusCode).toBe(200)
    const text = logged('search-log-1')
    expect(text).toContain('/v1/sms/history?size=5&q=[redacted]')
    for (const leak of [encodeURIComponent(search), 'Minji', '9876']) expect(text).not.toContain(leak)
  })

  it('never carry a credential sent in a query string, whatever the route answers', async () => {
    const secrets = { token: 'tok-4411-secret', access_token: 'acc-5522-secret', password: 'pw-6633-secret', Refresh_Token: 'ref-7744-secret' }
    const query = Object.entries(secrets).map(([key, value]) => `${key}=${value}`).join('&')
    await app.current.inject({ method: 'GET', url: `/v1/me?${query}&page=2`, headers: { 'x-request-id': 'credential-log-1' } })
    const text = logged('credential-log-1')
    expect(text).toContain('/v1/me?token=[redacted]&access_token=[redacted]&password=[redacted]&Refresh_Token=[redacted]&page=2')
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret)
  })
})
