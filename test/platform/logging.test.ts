import { describe, expect, it } from 'vitest'
import { registerOwner } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('logs', () => {
  const lines: string[] = []

  const app = useTestApp({ env: { LOG_LEVEL: 'debug' }, onLine: (line) => lines.push(line) })

  it('carry a request id on every request line', async () => {
    await app.current.inject({ method: 'GET', url: '/actuator/health', headers: { 'x-request-id': 'trace-me-123' } })
    const requestLines = lines.map((line) => JSON.parse(line)).filter((entry) => entry.reqId === 'trace-me-123')
    expect(requestLines.length).toBeGreaterThanOrEqual(2)
  })

  it('never contain passwords, tokens, cookies or phone numbers', async () => {
    const owner = await registerOwner(app.current)
    expect(owner.response.statusCode).toBe(201)
    await app.current.inject({ method: 'GET', url: '/v1/me', headers: owner.bearer, cookies: { svc_refresh_token: owner.refreshToken } })
    await app.current.inject({ method: 'PATCH', url: '/v1/me', headers: owner.bearer, payload: { phone: '010-2345-6789' } })
    // Defence in depth: even an object handed to the logger by mistake is redacted on the known paths.
    app.current.log.info({ req: { headers: { authorization: owner.bearer.authorization, cookie: 'svc_refresh_token=x' } }, user: { password: owner.password, phone: '01023456789' } }, 'careless log call')
    const text = lines.join('\n')
    for (const secret of [owner.password, owner.accessToken, owner.refreshToken, '01023456789', '010-2345-6789']) {
      expect(text).not.toContain(secret)
    }
    expect(text).toContain('[redacted]')
  })
})
