import type { FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'
import { buildAppWith } from '../helper.js'
import { RefreshGate } from './refresh-gate.js'

/** One answer as the service sent it, whether or not the browser let the page read it. */
export interface Answered {
  origin: string | undefined
  request: string
  status: number
}

export interface Service {
  /** `http://127.0.0.1:<port>` */
  url: string
  app: FastifyInstance
  refreshGate: RefreshGate
  /** Every answer so far, oldest first: `request` is `METHOD /path`. */
  answered: Answered[]
  close(): Promise<void>
}

/**
 * The production app on the run's test database (test/helper.ts), listening on 127.0.0.1 and a free port, so a real
 * browser talks to it over HTTP with real cookies. The only additions are test hooks that watch: the refresh gate
 * holds requests (and changes nothing in them), and every answer is noted.
 */
export async function startService(overrides: Record<string, string>): Promise<Service> {
  const refreshGate = new RefreshGate()
  const answered: Answered[] = []
  const app = await buildAppWith(async () => undefined, overrides, (bare) => {
    bare.addHook('onRequest', refreshGate.onRequest)
    bare.addHook('onResponse', async (request, reply) => {
      answered.push({ origin: request.headers.origin, request: `${request.method} ${request.url.split('?')[0]}`, status: reply.statusCode })
    })
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, app, refreshGate, answered, close: () => app.close() }
}
