import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openPostgres, type Database } from '../../db/database.js'
import { claimDueMessages } from '../../db/repos/dispatch.js'
import type { RegistrationStatus, TenantStatus } from '../../db/schema.js'
import { createDispatcher } from '../../lib/sms/dispatch/dispatcher.js'
import { createExtSmsProvider } from '../../lib/sms/providers/extsms.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../dispatch-fixtures.js'
import { startFakeExtSms, type FakeExtSms } from '../fakes/extsms-server.js'
import { isolatedDatabase, type IsolatedDatabase } from '../isolated-database.js'

const credentials = { apiKey: 'test-key', apiSecret: 'test-secret-value' }
const silent = pino({ level: 'silent' })

// SMS not yet handed to the provider are not dispatched while the tenant is not
// ACTIVE or (live provider) its sender is not APPROVED; they stay PENDING and go out once it is again.
describe('dispatch of a suspended tenant or an unapproved sender', () => {
  let iso: IsolatedDatabase
  let database: Database
  let fake: FakeExtSms

  beforeAll(async () => {
    iso = await isolatedDatabase()
    database = iso.open(4)
    fake = await startFakeExtSms(credentials)
  })
  afterAll(async () => {
    await fake.close()
    await database.close()
    await iso.drop()
  })
  afterEach(() => fake.reset())

  const dispatcher = () =>
    createDispatcher({
      db: database.db,
      provider: createExtSmsProvider({ ...credentials, baseUrl: fake.url, timeoutMs: 2000 }),
      log: silent,
      batchSize: 100,
      maxAttempts: 3,
      retryBaseSeconds: 30,
    })
  const sentFor = (smsId: number) => fake.sentMessages.filter((message) => message.customFields.svcSmsId === String(smsId))
  const setTenant = (tenantId: number, status: TenantStatus) =>
    iso.owner.updateTable('tenants').set({ status }).where('id', '=', tenantId).execute()
  const setSender = (tenantId: number, registrationStatus: RegistrationStatus) =>
    iso.owner.updateTable('smsSenderSettings').set({ registrationStatus }).where('tenantId', '=', tenantId).execute()

  it('keeps the messages of a SUSPENDED tenant PENDING, unclaimed and uncounted, and sends them once it is ACTIVE', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const smsId = await insertPendingMessage(iso.owner, tenant)
    await setTenant(tenant.tenantId, 'SUSPENDED')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })

    await setTenant(tenant.tenantId, 'ACTIVE')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
    expect((await messageState(iso.owner, smsId)).status).toBe('DISPATCHED')
  })

  it('holds live-provider messages while the sender is PENDING or REJECTED, and sends them once APPROVED', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const smsId = await insertPendingMessage(iso.owner, tenant)
    for (const status of ['REJECTED', 'PENDING'] as const) {
      await setSender(tenant.tenantId, status)
      await dispatcher().runOnce()
      expect(sentFor(smsId)).toHaveLength(0)
      expect(await messageState(iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })
    }
    await setSender(tenant.tenantId, 'APPROVED')
    await dispatcher().runOnce()
    expect(sentFor(smsId)).toHaveLength(2)
  })

  it('skips held messages in the claim instead of claiming them, so other tenants are not starved', async () => {
    const held = await insertTenantAndSender(iso.owner)
    const heldIds = []
    for (let i = 0; i < 3; i++) {
      heldIds.push(await insertPendingMessage(iso.owner, { ...held, nextAttemptAt: new Date(Date.now() - 60_000) }))
    }
    await setTenant(held.tenantId, 'CLOSED')
    const active = await insertTenantAndSender(iso.owner)
    const activeId = await insertPendingMessage(iso.owner, active)

    const claims = await claimDueMessages(database.db, 1, 30)
    expect(claims.map((claim) => claim.smsId)).toEqual([activeId])
    for (const smsId of heldIds) expect((await messageState(iso.owner, smsId)).claimToken).toBeNull()
  })

  it('does not hand over a message whose tenant was suspended after the claim, and gives the claim back', async () => {
    const tenant = await insertTenantAndSender(iso.owner)
    const smsId = await insertPendingMessage(iso.owner, { ...tenant, nextAttemptAt: new Date(Date.now() - 3_600_000) })
    const [claim] = await claimDueMessages(database.db, 1, 30)
    expect(claim?.smsId).toBe(smsId)
    await setTenant(tenant.tenantId, 'SUSPENDED')
    await dispatcher().processClaim(claim!)
    expect(sentFor(smsId)).toHaveLength(0)
    expect(await messageState(iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0, claimToken: null })
  })
})
