import { describe, expect, it } from 'vitest'
import { until } from '../support/auth-fixtures.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { fakeExtSmsCredentials, useProviderTestBed } from './dispatch-test-bed.js'
import { providerSecretHeader } from '../support/fakes/extsms-server.js'
import { buildTestApp, startTestApp } from '../support/helper.js'

// The cron ticks every second and a dispatch pass follows: a longer deadline than the fixtures' default.
const SCHEDULED_WITHIN_MS = 10_000

describe('dispatch scheduling in the running service', () => {
  const bed = useProviderTestBed()

  const liveEnv = (cron = '*/1 * * * * *') => ({
    DATABASE_URL: bed.iso.url,
    SVC_SMS_DISPATCHER: 'on',
    SVC_SMS_SCHEDULER_CRON: cron,
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
    SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
    SVC_SMS_EXTSMS_BASE_URL: bed.fake.url,
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'token',
  })

  it('finds due work on its cron tick even when no kick came (the rows are the outbox)', async () => {
    const app = await startTestApp({ env: liveEnv(), scheduledJobs: true })
    try {
      const tenant = await insertTenantAndSender(bed.iso.owner)
      // As if the process had died between the send's commit and its kick.
      const smsId = await insertPendingMessage(bed.iso.owner, tenant)
      await until(async () => (await messageState(bed.iso.owner, smsId)).status === 'DISPATCHED', SCHEDULED_WITHIN_MS)
      // A scheduled message becomes due on a later tick.
      const dueSoon = new Date(Date.now() + 1500)
      const scheduled = await insertPendingMessage(bed.iso.owner, { ...tenant, scheduledAt: dueSoon, nextAttemptAt: dueSoon })
      expect((await messageState(bed.iso.owner, scheduled)).status).toBe('PENDING')
      await until(async () => (await messageState(bed.iso.owner, scheduled)).status === 'DISPATCHED', SCHEDULED_WITHIN_MS)
    } finally {
      await app.close()
    }
  })

  it('on shutdown stops claiming and lets an in-flight dispatch finish and record', async () => {
    // A cron that never fires during the test: only the explicit kick dispatches.
    const app = await buildTestApp(liveEnv('0 0 1 1 *'))
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, tenant)
    bed.fake.fail({ timeoutMs: 700 })
    app.dispatcher.kick()
    await until(async () => (await messageState(bed.iso.owner, smsId)).claimToken !== null, SCHEDULED_WITHIN_MS)
    await app.close()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'DISPATCHED', claimToken: null, dispatchAttempts: 1 })
    bed.fake.reset()

    const afterClose = await insertPendingMessage(bed.iso.owner, tenant)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await messageState(bed.iso.owner, afterClose)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
  })

  it('hands as many messages to the provider at once as SVC_SMS_DISPATCH_WORKERS says', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    for (let i = 0; i < 5; i++) await insertPendingMessage(bed.iso.owner, tenant)
    // Every group's creation takes effect and its answer is held: each held call is a busy worker.
    bed.fake.fail({ timeoutMs: 1500, phase: 'create' })
    const app = await buildTestApp({ ...liveEnv('0 0 1 1 *'), SVC_SMS_DISPATCH_WORKERS: '3' })
    try {
      app.dispatcher.kick()
      await until(() => bed.fake.holding() === 3, SCHEDULED_WITHIN_MS)
      // The other two wait for a free worker (the default would have started a fourth).
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(bed.fake.holding()).toBe(3)
    } finally {
      bed.fake.reset()
      await app.close()
    }
  })

  it('accepts no provider callback on a deployment without a webhook token', async () => {
    const app = await buildTestApp({ DATABASE_URL: bed.iso.url })
    try {
      const response = await app.inject({ method: 'POST', url: '/v1/sms/solapi/webhook', headers: { 'x-provider-secret': providerSecretHeader('') }, payload: [] })
      expect(response.statusCode).toBe(401)
    } finally {
      await app.close()
    }
  })
})
