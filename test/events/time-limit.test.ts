import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { keepAliveAgents, postEvent, type PostOutcome } from '../../lib/events/post-event.js'
import { until } from '../support/auth-fixtures.js'
import { collectingGarbage } from './garbage-collection.js'

// Long enough that a head written at once arrives within it, while collections every 50 ms slow everything down.
const LIMIT_MS = 1000

/** What a receiver does once the request has arrived; none of them ever finishes an answer. */
type Behaviour = 'silent' | 'stalled body' | 'trickled head' | 'trickled body'

const OPENINGS: Record<Behaviour, string> = {
  silent: '',
  'stalled body': 'HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n{',
  'trickled head': 'HTTP/1.1 200 OK\r\nx-slow: ',
  'trickled body': 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n',
}
const TRICKLES: Partial<Record<Behaviour, string>> = { 'trickled head': 'a', 'trickled body': '1\r\na\r\n' }

interface Misbehaving {
  url: URL
  /** Whether each connection it accepted has closed. */
  closed: boolean[]
  close(): Promise<void>
}

/** A TCP listener on loopback speaking just enough HTTP to hold a client in each way a receiver can. */
async function misbehavingReceiver(behaviour: Behaviour): Promise<Misbehaving> {
  const closed: boolean[] = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    const index = closed.push(false) - 1
    sockets.add(socket)
    let trickle: NodeJS.Timeout | undefined
    socket.once('data', () => {
      socket.write(OPENINGS[behaviour])
      const drop = TRICKLES[behaviour]
      if (drop) trickle = setInterval(() => socket.write(drop), 20)
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(trickle)
      closed[index] = true
      sockets.delete(socket)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: new URL(`http://127.0.0.1:${port}/hooks`),
    closed,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

// Every attempt ends at its time limit whatever the receiver does, with garbage collections running meanwhile, on real
// timers: on Node 20 a time limit made of AbortSignal.any and AbortSignal.timeout was collected before it fired, and
// the request then waited for ever, holding its worker (a fake clock hides that, as no collection runs).
describe('a webhook attempt against a receiver that never finishes its answer', () => {
  const agents = keepAliveAgents(2)
  // Never aborted here; passed as the deliverer passes its own (shutdown).
  const abandon = new AbortController()
  afterAll(() => {
    agents.http.destroy()
    agents.https.destroy()
  })

  it.each<[Behaviour, PostOutcome]>([
    ['silent', { error: `no answer within ${LIMIT_MS} ms` }],
    ['trickled head', { error: `no answer within ${LIMIT_MS} ms` }],
    // The head said 200 in time: delivered, and the body it never finishes costs no more than the time limit.
    ['stalled body', { status: 200 }],
    ['trickled body', { status: 200 }],
  ])('ends at the time limit when the receiver is a %s one, and closes the connection', async (behaviour, expected) => {
    const receiver = await misbehavingReceiver(behaviour)
    const stopCollecting = collectingGarbage()
    try {
      let outcome: PostOutcome | undefined
      void postEvent({ url: receiver.url, address: '127.0.0.1' }, {}, '{}', LIMIT_MS, agents, abandon.signal).then((ended) => (outcome = ended))
      await until(() => outcome !== undefined && receiver.closed.length === 1 && receiver.closed[0] === true, 10_000)
      expect(outcome).toEqual(expected)
    } finally {
      stopCollecting()
      await receiver.close()
    }
  })
})
