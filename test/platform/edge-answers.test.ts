import { connect } from 'node:net'
import { beforeAll, describe, expect, it } from 'vitest'
import { problemType, type ErrorCode } from '../../lib/errors.js'
import { useTestApp } from '../support/helper.js'

/** One raw HTTP/1.1 exchange over a real socket: what a client sees when the answer never reaches inject. */
function exchange(port: number, request: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    // The server may close before it has read everything sent (a refused body): keep what arrived.
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)))
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const [head = '', ...rest] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      )
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') })
    })
    // Written, not ended: a half-closed client would make the server see a truncated request. The server closes
    // (Connection: close, or after a refused request); the timer only bounds a test that would otherwise hang.
    socket.write(request)
    setTimeout(() => socket.destroy(), 5000).unref()
  })
}

function expectCatalogProblem(answer: Awaited<ReturnType<typeof exchange>>, status: number, code: ErrorCode) {
  expect(answer.status).toBe(status)
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/)
  // Chunked bodies carry their framing; every body here is small and sent with a Content-Length.
  const body = JSON.parse(answer.body)
  expect(body).toMatchObject({ type: problemType(code), status, code, title: expect.any(String), detail: expect.any(String) })
  return body
}

describe('answers outside the routes, over a real socket', () => {
  let port: number
  const app = useTestApp()
  beforeAll(async () => {
    await app.current.listen({ host: '127.0.0.1', port: 0 })
    port = (app.current.server.address() as { port: number }).port
  })

  it('answers headers too large (Node refuses them before Fastify) with 431 problem+json from the catalog', async () => {
    const answer = await exchange(port, `GET /v1/me HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`)
    const body = expectCatalogProblem(answer, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE')
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body))
    expect(body.status).toBe(431)
  })

  it('answers a request the HTTP parser cannot read with 400 problem+json', async () => {
    expectCatalogProblem(await exchange(port, 'NOT A REQUEST\r\n\r\n'), 400, 'VALIDATION_FAILED')
  })

  it('answers OPTIONS (a preflight) to an unknown route with 404 problem+json', async () => {
    const answer = await exchange(
      port,
      'OPTIONS /v1/no-such-route HTTP/1.1\r\nHost: localhost\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n',
    )
    expectCatalogProblem(answer, 404, 'NOT_FOUND')
  })

  it('answers a body over the limit with 413 problem+json', async () => {
    const size = 4 * 1024 * 1024 + 1
    const answer = await exchange(
      port,
      `POST /v1/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n{}`,
    )
    expectCatalogProblem(answer, 413, 'PAYLOAD_TOO_LARGE')
  })

  it('answers a body that is not JSON with 415 problem+json', async () => {
    const answer = await exchange(
      port,
      'POST /v1/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello',
    )
    expectCatalogProblem(answer, 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  // Refusals Node's HTTP server would otherwise answer itself, with an empty body, before Fastify saw them.
  it('answers an HTTP/1.1 request without a Host header 400 problem+json, before any route runs', async () => {
    const answer = await exchange(port, 'GET /actuator/health HTTP/1.1\r\nConnection: close\r\n\r\n')
    expect(expectCatalogProblem(answer, 400, 'VALIDATION_FAILED').detail).toMatch(/Host/)
  })

  // Refused before any route's policy: no credential is read, no budget counted, no signature checked first.
  it.each([
    ['a signed-in user', 'GET /v1/me'],
    ['the OWNER', 'GET /v1/audit-events?page=0'],
    ['a public route with an address budget', 'POST /v1/login'],
    ['the refresh cookie', 'POST /v1/refresh'],
    ['a signed internal call', 'POST /internal/sms/sender-settings/acme/approval'],
    ['the provider callback', 'POST /v1/sms/solapi/webhook'],
    ['the metrics token', 'GET /metrics'],
  ])('answers 400 problem+json, not its own refusal, on a route for %s (%s) without Host', async (_who, line) => {
    const body = line.startsWith('POST') ? '{}' : ''
    const headers = body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''
    const answer = await exchange(port, `${line} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n${body}`)
    expect(expectCatalogProblem(answer, 400, 'VALIDATION_FAILED').detail).toMatch(/Host/)
  })

  it('still serves an HTTP/1.0 request without a Host header, which the protocol allows', async () => {
    const answer = await exchange(port, 'GET /actuator/health HTTP/1.0\r\n\r\n')
    expect(answer.status).toBe(200)
  })

  it('answers an Expect header other than 100-continue 417 problem+json', async () => {
    const answer = await exchange(port, 'GET /actuator/health HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\nConnection: close\r\n\r\n')
    expect(expectCatalogProblem(answer, 417, 'EXPECTATION_FAILED').detail).toMatch(/Expect/)
  })
})

// A client that sends its request slower than SVC_HTTP_REQUEST_TIMEOUT_MS allows (a slowloris) gets 408 and loses the
// connection, instead of holding it (and a socket of the service) for as long as it keeps trickling.
describe('a request that takes too long to arrive', () => {
  let port: number
  const app = useTestApp({ env: { SVC_HTTP_REQUEST_TIMEOUT_MS: '400' } })
  beforeAll(async () => {
    await app.current.listen({ host: '127.0.0.1', port: 0 })
    port = (app.current.server.address() as { port: number }).port
  })

  it('answers 408 problem+json to a body that stops short of its Content-Length, and closes', async () => {
    const started = Date.now()
    const answer = await exchange(
      port,
      'POST /v1/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"userLoginId":',
    )
    expectCatalogProblem(answer, 408, 'REQUEST_TIMEOUT')
    // Well before the exchange's own 5 s limit: the server ended it.
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it('answers 408 problem+json to headers that never end, and closes', async () => {
    expectCatalogProblem(await exchange(port, 'GET /v1/me HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n'), 408, 'REQUEST_TIMEOUT')
  })

  it('still serves a request that arrives in time on the same settings', async () => {
    const answer = await exchange(port, 'GET /actuator/health/liveness HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
    expect(answer.status).toBe(200)
  })
})
