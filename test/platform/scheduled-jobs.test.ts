import cron from 'node-cron'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildService } from '../../build.js'
import { openTestDatabase, startTestApp, testEnv } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

const EVERY_JOB = [
  'ad-consent-notices',
  'opt-out-080-sync',
  'purge-expired',
  'sms-dispatch',
  'sms-partition-upkeep',
  'sms-retention',
  'webhook-delivery',
]

/** Names of the cron tasks this worker has scheduled and not destroyed. */
const scheduledNames = () => new Set([...cron.getTasks().values()].map((task) => task.name))

describe('scheduled jobs', () => {
  let iso: IsolatedDatabase
  // Every background switch on, on a database of its own: the jobs may fire while the apps are open.
  const env = () => ({ DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.ownerUrl, SVC_SMS_DISPATCHER: 'on', SVC_SMS_PARTITION_UPKEEP: 'on' })

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })

  it('are scheduled by the service as server.ts builds it, and destroyed when it closes', async () => {
    const before = scheduledNames()
    const productionEnv = testEnv(env())
    const app = await buildService(productionEnv, openTestDatabase(productionEnv))
    try {
      const started = [...scheduledNames()].filter((name) => !before.has(name))
      expect(started.sort()).toEqual(EVERY_JOB)
    } finally {
      await app.close()
    }
    const after = scheduledNames()
    expect(EVERY_JOB.filter((name) => after.has(name) && !before.has(name))).toEqual([])
  })

  it('are not scheduled in a test app unless it asks for them', async () => {
    const before = scheduledNames()
    const app = await startTestApp({ env: env() })
    try {
      expect([...scheduledNames()].filter((name) => !before.has(name))).toEqual([])
      expect(app.dispatcher.kick).toBeTypeOf('function')
    } finally {
      await app.close()
    }
  })
})
