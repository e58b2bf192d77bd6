import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { expectProblem, login, uniqueAddress, type Response } from '../support/auth-fixtures.js'
import { configProblems } from '../support/config-problems.js'
import { owner, unique } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { inOneRateWindow } from '../support/rate-window.js'

const LIMIT = 3

const badLogin = (app: FastifyInstance, remoteAddress: string, forwardedFor?: string) =>
  login(
    app,
    { userLoginId: unique('nobody'), password: 'irrelevant-1' },
    { remoteAddress, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } },
  )

const expectRefusedForBudget = (response: Response) => expectProblem(response, 429, 'AUTH_018')

/** For the describe's tests: the app with a route that echoes what the service takes for the client address. */
function useAppWithEcho(trustProxy: string): { current: FastifyInstance } {
  return useTestApp({
    extend: async (test) => {
      test.get('/test/ip', { config: { access: 'public' } }, async (request) => ({ ip: request.ip }))
    },
    env: { SVC_TRUST_PROXY: trustProxy, SVC_LOGIN_IP_PER_MINUTE: String(LIMIT) },
  })
}

describe('SVC_TRUST_PROXY as a hop count', () => {
  const app = useAppWithEcho('1')

  it('takes the right-most X-Forwarded-For entry, the one the trusted proxy added', async () => {
    const response = await app.current.inject({ url: '/test/ip', headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.7' } })
    expect(response.json()).toEqual({ ip: '203.0.113.7' })
  })

  it('does not let a client dodge the login address budget by rotating a spoofed left-most entry', async () => {
    await inOneRateWindow(owner(), async () => {
      const [proxy, client] = [uniqueAddress(), uniqueAddress()]
      for (let request = 0; request < LIMIT; request++) {
        const spoofed = uniqueAddress()
        expectProblem((await badLogin(app.current, proxy, `${spoofed}, ${client}`)).response, 401, 'AUTH_001')
      }
      expectRefusedForBudget((await badLogin(app.current, proxy, `${uniqueAddress()}, ${client}`)).response)
      // The budget is the client's, not the proxy's: another client behind the same proxy still gets through.
      expectProblem((await badLogin(app.current, proxy, `${client}, ${uniqueAddress()}`)).response, 401, 'AUTH_001')
    })
  })
})

describe('SVC_TRUST_PROXY as a list of proxy addresses', () => {
  const app = useAppWithEcho('127.0.0.1, 10.250.0.0/16')

  it('skips every trusted proxy from the right and takes the first address none of them added', async () => {
    const response = await app.current.inject({
      url: '/test/ip',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': '6.6.6.6, 198.51.100.4, 10.250.3.4' },
    })
    expect(response.json()).toEqual({ ip: '198.51.100.4' })
  })

  it('lets a request from an untrusted peer choose nothing: its address is the peer', async () => {
    const response = await app.current.inject({ url: '/test/ip', remoteAddress: '192.0.2.44', headers: { 'x-forwarded-for': '6.6.6.6' } })
    expect(response.json()).toEqual({ ip: '192.0.2.44' })
  })

  it('counts an untrusted peer against its own budget whatever X-Forwarded-For it sends', async () => {
    await inOneRateWindow(owner(), async () => {
      const peer = uniqueAddress()
      for (let request = 0; request < LIMIT; request++) {
        expectProblem((await badLogin(app.current, peer, uniqueAddress())).response, 401, 'AUTH_001')
      }
      expectRefusedForBudget((await badLogin(app.current, peer, uniqueAddress())).response)
    })
  })
})

describe('SVC_TRUST_PROXY configuration', () => {
  const problemsOf = (value: string) => configProblems({ SVC_TRUST_PROXY: value })

  it('refuses true at start with a message that says what to set instead', () => {
    const [problem, ...others] = problemsOf('true')
    expect(others).toEqual([])
    expect(problem).toMatch(/^SVC_TRUST_PROXY: /)
    expect(problem).toMatch(/hop count/)
    expect(problem).toMatch(/spoof/)
  })

  it.each(['false', '1', '2', '10.0.0.1', '10.0.0.0/8, 192.168.1.1', '::1, fd00::/8', 'loopback'])('accepts %s', (value) => {
    expect(problemsOf(value)).toEqual([])
  })

  it.each(['yes', '-1', '0.5', '10.0.0.0/33', 'proxy.example', '10.0.0.1,,10.0.0.2'])('refuses %s', (value) => {
    expect(problemsOf(value)).toEqual([expect.stringMatching(/^SVC_TRUST_PROXY: /)])
  })
})
