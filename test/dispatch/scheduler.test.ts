import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../dispatch-fixtures.js'
import { providerSecretHeader, startFakeExtSms, type FakeExtSms } from '../fakes/extsms-server.js'
import { buildTestApp } from '../helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../isolated-database.js'

const credentials = { apiKey: 'test-key', apiSecret: 'test-secret-value' }

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('dispatch scheduling in the running service', () => {
  let iso: IsolatedDatabase
  let fake: FakeExtSms

  beforeAll(async () => {
    iso = await isolatedDatabase()
    fake = await startFakeExtSms(credentials)
  })
  afterAll(async () => {
    await fake.close()
    await iso.drop()
  })

  const liveEnv = (cron = '*/1 * * * * *') => ({
    DATABASE_URL: iso.url,
    SVC_SMS_DISPATCHER: 'on',
    SVC_SMS_SCHEDULER_CRON: cron,
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: credentials.apiKey,
    SVC_SMS_EXTSMS_API_SECRET: credentials.apiSecret,
    SVC_SMS_EXTSMS_BASE_URL: fake.url,
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'token',
  })

  it('finds due work on its cron tick even when no kick came (the rows are the outbox)', async () => {
    const app = await buildTestApp(liveEnv())
    try {
      const tenant = await insertTenantAndSender(iso.owner)
      // As if the process had died between the send's commit and its kick.
      const smsId = await insertPendingMessage(iso.owner, tenant)
      await until(async () => (await messageState(iso.owner, smsId)).status === 'DISPATCHED')
      // A scheduled message becomes due on a later tick.
      const dueSoon = new Date(Date.now() + 1500)
      const scheduled = await insertPendingMessage(iso.owner, { ...tenant, scheduledAt: dueSoon, nextAttemptAt: dueSoon })
      expect((await messageState(iso.owner, scheduled)).status).toBe('PENDING')
      await until(async () => (await messageState(iso.owner, scheduled)).status === 'DISPATCHED')
    } finally {
      await app.close()
    }
  })

  it('on shutdown stops claiming and lets an in-flight dispatch finish and record', async () => {
    // A cron that never fires during the test: only the explicit kick dispatches.
    const app = await buildTestApp(liveEnv('0 0 1 1 *'))
    const tenant = await insertTenantAndSender(iso.owner)
    const smsId = await insertPendingMessage(iso.owner, tenant)
    fake.fail({ timeoutMs: 700 })
    app.dispatcher.kick()
    await until(async () => (await messageState(iso.owner, smsId)).claimToken !== null)
    await app.close()
    const state = await messageState(iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', claimToken: null, dispatchAttempts: 1 })
    fake.reset()

    const afterClose = await insertPendingMessage(iso.owner, tenant)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await messageState(iso.owner, afterClose)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
  })

  it('accepts no provider callback on a deployment without a webhook token', async () => {
    const app = await buildTestApp({ DATABASE_URL: iso.url })
    try {
      const response = await app.inject({ method: 'POST', url: '/v1/sms/solapi/webhook', headers: { 'x-provider-secret': providerSecretHeader('') }, payload: [] })
      expect(response.statusCode).toBe(401)
    } finally {
      await app.close()
    }
  })
})
