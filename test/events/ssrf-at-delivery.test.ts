import type { FastifyInstance } from 'fastify'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { completedMessage, deliveries, eventRows, isolatedAcademy, metric, putEndpoint, settleEvents } from './delivery-bed.js'

const PUBLIC = '93.184.216.34'

// The endpoint's host is resolved again at each delivery (SVC_WEBHOOK_ALLOW_PRIVATE=false): a name that pointed to a
// public address when it was set and points to loopback now (DNS rebinding) gets no request. The app's resolver is
// the test's; the URL names the port of a TCP listener on 127.0.0.1 that counts connections, so an attempt that
// went out despite the rule would be seen there.
describe('webhook delivery to a name that now resolves to a refused address', () => {
  let iso: IsolatedDatabase
  let app: FastifyInstance
  let answer: string[] = [PUBLIC]
  const asked: string[] = []
  let listener: Server
  let port: number
  let connections = 0

  beforeAll(async () => {
    iso = await isolatedDatabase()
    listener = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
    port = (listener.address() as AddressInfo).port
    const resolveHost = async (hostname: string) => {
      asked.push(hostname)
      return answer
    }
    app = await buildTestApp({ DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'off', SVC_WEBHOOK_ALLOW_PRIVATE: 'false' }, undefined, resolveHost)
  })
  afterEach(async () => {
    await settleEvents(iso.owner)
  })
  afterAll(async () => {
    await app?.close()
    await new Promise((resolve) => listener?.close(resolve))
    await iso?.drop()
  })

  /** An endpoint set while its name resolved to a public address, and a completed message's event waiting. */
  async function eventForRebound(rebound: string[]) {
    answer = [PUBLIC]
    const academy = await isolatedAcademy(app, iso.owner)
    await putEndpoint(app, academy, `https://hooks.example:${port}/x`)
    await completedMessage(app, iso.owner, academy)
    answer = rebound
    asked.length = 0
    return academy
  }

  it.each([
    ['loopback', ['127.0.0.1']],
    ['a public address beside loopback', [PUBLIC, '127.0.0.1']],
    ['loopback beside a public address', ['127.0.0.1', PUBLIC]],
    ['a private network address', ['10.0.0.8']],
    ['IPv6 loopback', ['::1']],
  ])('sends nothing when the host now resolves to %s, and counts a refused attempt', async (_name, rebound) => {
    const academy = await eventForRebound(rebound)
    const refusedBefore = await metric(app, deliveries('refused'))
    const connectionsBefore = connections

    expect(await app.webhooks.deliverer.runOnce()).toBe(1)

    expect(asked).toEqual(['hooks.example'])
    expect(connections).toBe(connectionsBefore)
    const [row] = await eventRows(iso.owner, academy.tenantId)
    expect(row).toMatchObject({ attempts: 1, deliveredAt: null, givenUpAt: null })
    expect(row!.lastError).toMatch(/hooks\.example.*refused address/)
    // Retried on the schedule like any failed attempt: the name may point back to a public address.
    expect(row!.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 3000)
    expect(await metric(app, deliveries('refused'))).toBe(refusedBefore + 1)
  })

  it('sends nothing when the host no longer resolves', async () => {
    const academy = await eventForRebound([])
    const connectionsBefore = connections
    expect(await app.webhooks.deliverer.runOnce()).toBe(1)
    const [row] = await eventRows(iso.owner, academy.tenantId)
    expect(row).toMatchObject({ attempts: 1, deliveredAt: null, lastError: 'hooks.example does not resolve' })
    expect(connections).toBe(connectionsBefore)
  })
})
