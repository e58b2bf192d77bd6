import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import { expectProblem } from '../../support/auth-fixtures.js'
import { buildAppLoggingTo, describePostgres, itPostgres, testEnv } from '../../support/helper.js'
import { keyRows, messageRows, minutesFromNow, newKey, problem, recipients, send } from '../../support/sms-send-fixtures.js'
import { academy, type Actor } from '../../support/staff-fixtures.js'
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js'

type Line = Record<string, unknown>

const RELEASE_WARNING = 'could not give an idempotency key back; retrying in the background'

/** Sends the same request until it is created; every earlier answer is returned beside it. */
async function retryUntilCreated(app: FastifyInstance, who: Actor, payload: unknown, key: string, timeoutMs: number) {
  const earlier: Array<{ status: number; code?: string }> = []
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const response: LightMyRequestResponse = await send(app, who, payload, key)
    if (response.statusCode === 201) return { created: response, earlier }
    earlier.push(problem(response))
    if (Date.now() > deadline) throw new Error(`still not created after ${earlier.length} retries: ${JSON.stringify(earlier.slice(-3))}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

// A send whose database goes away after its key was claimed answers 503; the key must not stay IN_PROGRESS (every
// retry answering 409) for longer than SVC_IDEMPOTENCY_CLAIM_SECONDS, and the retry that gets through creates the
// message once. The database is reached through a loopback proxy the test cuts between the claim and the commit.
describePostgres('an Idempotency-Key whose request lost the database', () => {
  let proxy: TcpProxy
  const lines: Line[] = []
  let cutAfterClaim = false

  beforeAll(async () => {
    const target = new URL(inject('runtimeDatabaseUrl'))
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  })
  afterAll(async () => {
    await proxy.close()
  })

  const appThroughProxy = (overrides: Record<string, string> = {}) =>
    buildAppLoggingTo(
      testEnv({ LOG_LEVEL: 'info', DATABASE_URL: proxy.through(inject('runtimeDatabaseUrl')), SVC_DB_CONNECT_TIMEOUT_MS: '1000', ...overrides }),
      (line) => lines.push(JSON.parse(line) as Line),
      (service) =>
        // Extensions run in the order they were added: this one after the idempotency plugin has committed the claim,
        // before the request transaction opens.
        service.requestTransaction.extend({
          name: 'test-cut-after-claim',
          appliesTo: (config) => config.idempotency !== undefined,
          async beforeOpen() {
            if (cutAfterClaim) {
              cutAfterClaim = false
              proxy.cut()
            }
            return 'continue'
          },
        }),
    )
  const payload = () => ({ recipients: recipients(3), title: 'Stuck key', content: 'Once only, {name}', scheduledAt: minutesFromNow(60) })

  itPostgres('gives the key back in the background once the database is back, and the retry creates the message once', async () => {
    // The default 30 seconds outlast the test: only the background release can free the key in time.
    const app = await appThroughProxy()
    try {
      const { tenant, owner: sender } = await academy(app)
      const key = newKey()
      const body = payload()
      const mark = lines.length
      cutAfterClaim = true
      expectProblem(await send(app, sender, body, key), 503, 'SERVICE_UNAVAILABLE')
      // The refusal, its broken rollback and the failed release: the outage's warning and the key's, no stack.
      const during = lines.slice(mark)
      expect(during.filter((line) => (line.level as number) >= 40).map((line) => line.msg)).toEqual(['database unreachable', RELEASE_WARNING])
      expect(JSON.stringify(during)).not.toContain('stack')
      expect(await keyRows(tenant)).toEqual([expect.objectContaining({ key, state: 'IN_PROGRESS' })])
      expect(await messageRows(tenant)).toHaveLength(0)
      // Still cut off: the retry cannot even read the key.
      expectProblem(await send(app, sender, body, key), 503, 'SERVICE_UNAVAILABLE')

      proxy.thaw()
      const { created, earlier } = await retryUntilCreated(app, sender, body, key, 10_000)
      for (const answer of earlier) expect(answer).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      expect(created.headers['idempotent-replayed']).toBeUndefined()
      const messages = await messageRows(tenant)
      expect(messages.map((message) => message.id)).toEqual([created.json().id])
      expect(await keyRows(tenant)).toEqual([expect.objectContaining({ key, state: 'COMPLETED', resourceId: created.json().id })])

      const warnings = lines.filter((line) => line.msg === RELEASE_WARNING && line.key === key)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatchObject({ level: 40, tenantId: tenant.id, route: 'POST /v1/sms/send' })
      expect(JSON.stringify(warnings[0])).not.toContain('stack')
    } finally {
      proxy.thaw()
      await app.close()
    }
  })

  itPostgres('frees the key SVC_IDEMPOTENCY_CLAIM_SECONDS after its claim when nothing could give it back', async () => {
    const first = await appThroughProxy({ SVC_IDEMPOTENCY_CLAIM_SECONDS: '5' })
    let second: FastifyInstance | undefined
    try {
      const { tenant, owner: sender } = await academy(first)
      const key = newKey()
      const body = payload()
      cutAfterClaim = true
      expectProblem(await send(first, sender, body, key), 503, 'SERVICE_UNAVAILABLE')
      const [claimed] = await keyRows(tenant)
      expect(claimed).toMatchObject({ key, state: 'IN_PROGRESS' })
      // The instance goes away while the database is still out of reach: its background release ends with it.
      await first.close()
      proxy.thaw()

      second = await appThroughProxy({ SVC_IDEMPOTENCY_CLAIM_SECONDS: '5' })
      const { created, earlier } = await retryUntilCreated(second, sender, body, key, 15_000)
      for (const answer of earlier) expect(answer).toEqual({ status: 409, code: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' })
      const [completed] = await keyRows(tenant)
      expect(completed).toMatchObject({ state: 'COMPLETED', resourceId: created.json().id })
      // Taken over by the claim-seconds rule (the database's clock), not given back by the closed instance.
      expect(completed!.createdAt.getTime() - claimed!.createdAt.getTime()).toBeGreaterThanOrEqual(5000)
      expect((await messageRows(tenant)).map((message) => message.id)).toEqual([created.json().id])
    } finally {
      proxy.thaw()
      await first.close()
      await second?.close()
    }
  })
})
