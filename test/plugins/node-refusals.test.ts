import type { FastifyInstance } from 'fastify'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { problemType, type ErrorCode } from '../../lib/errors.js'
import { buildTestApp } from '../helper.js'

/** One raw HTTP/1.1 exchange over a real socket, read until the server closes or the first answer is whole. */
function exchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    const done = () => {
      const [head = '', ...rest] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      )
      socket.destroy()
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') })
    }
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8')
      const length = /\r\ncontent-length: *(\d+)/i.exec(text)?.[1]
      const start = text.indexOf('\r\n\r\n')
      if (start !== -1 && Buffer.byteLength(text.slice(start + 4)) >= Number(length ?? Infinity)) done()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? undefined : reject(error)))
    socket.on('close', done)
    socket.write(request)
    setTimeout(() => socket.destroy(), 5000).unref()
  })
}

function expectCatalogProblem(answer: Awaited<ReturnType<typeof exchange>>, status: number, code: ErrorCode) {
  expect(answer.status).toBe(status)
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body))
  const body = JSON.parse(answer.body)
  expect(body).toMatchObject({ type: problemType(code), status, code, title: expect.any(String), detail: expect.any(String) })
  return body
}

/** Requests Node's HTTP server would refuse by itself, with an empty body, before Fastify ever saw them. */
describe('refusals Node would answer itself', () => {
  let app: FastifyInstance
  let port: number
  beforeAll(async () => {
    app = await buildTestApp()
    await app.listen({ host: '127.0.0.1', port: 0 })
    port = (app.server.address() as { port: number }).port
  })
  afterAll(() => app?.close())

  it('answers an HTTP/1.1 request without a Host header 400 problem+json, before any route runs', async () => {
    const answer = await exchange(port, 'GET /actuator/health HTTP/1.1\r\nConnection: close\r\n\r\n')
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
