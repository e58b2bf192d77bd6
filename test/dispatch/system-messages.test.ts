import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { randomInt, randomUUID } from 'node:crypto'
import pino from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { loadEnv } from '../../lib/env.js'
import { catalogErrorFor } from '../../lib/catalog-errors.js'
import { createProvider } from '../../lib/dispatch/providers/index.js'
import type { SendRequest } from '../../lib/dispatch/providers/provider.js'
import { enqueueSystemSms, systemSmsSettings, type SystemSms, type SystemSmsSettings } from '../../lib/dispatch/system-messages.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { fakeExtSmsCredentials, useProviderTestBed } from './dispatch-test-bed.js'
import { deliveryReportBody, providerSecretHeader } from '../support/fakes/extsms-server.js'
import { buildAppLoggingTo, testEnv } from '../support/helper.js'

const WEBHOOK_TOKEN = 'system-messages-webhook'
const SYSTEM_SENDER = '15881234'

/** A six-digit code, and a pattern that finds it only as a number of its own (never inside a timestamp or an id). */
function newCode() {
  const code = String(randomInt(100_000, 1_000_000))
  return { code, pattern: new RegExp(`(?<![0-9])${code}(?![0-9])`) }
}

describe('system messages (one-time codes) through the outbox', () => {
  const bed = useProviderTestBed()
  let service: FastifyInstance
  let settings: SystemSmsSettings
  const logLines: string[] = []

  beforeAll(async () => {
    // The production app on the live provider adapter, sending to the fake; every log line of it is captured. The
    // scheduler's tick is yearly: only a kick or runOnce sends.
    const env = testEnv({
      DATABASE_URL: bed.iso.url,
      LOG_LEVEL: 'trace',
      SVC_SMS_DISPATCHER: 'on',
      SVC_SMS_SCHEDULER_CRON: '0 0 1 1 *',
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: bed.fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: WEBHOOK_TOKEN,
      SVC_SMS_SYSTEM_SENDER: SYSTEM_SENDER,
    })
    service = await buildAppLoggingTo(env, (line) => logLines.push(line))
    settings = systemSmsSettings(service.env)
  })
  afterAll(async () => {
    await service?.close()
  })
  // The dispatcher claims every due message of the database: what an earlier test left due goes out first, so the
  // faults a test injects meet its own message.
  beforeEach(async () => {
    while ((await service.dispatcher.runOnce()) > 0);
  })

  type Tenant = Awaited<ReturnType<typeof insertTenantAndSender>>

  function enqueue(tenant: Tenant, sms: Omit<SystemSms, 'tenantId' | 'kind'>, overrides: Partial<SystemSmsSettings> = {}) {
    return withTenant(service.db, tenant.tenantId, (trx) =>
      enqueueSystemSms(trx, { ...settings, ...overrides }, { tenantId: tenant.tenantId, kind: 'VERIFICATION_CODE', ...sms }),
    )
  }

  async function staffHeaders(tenant: Tenant) {
    const { access } = await issueTokenPair(
      service.tokenKeys,
      { userId: tenant.senderId, tenantId: tenant.tenantId, tenantSlug: tenant.slug, role: 'MANAGER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    return { authorization: `Bearer ${access.token}` }
  }

  /** Everything the database keeps of a message and its recipients, as the owner reads it (RLS bypassed). */
  async function storedRows(smsId: number): Promise<string> {
    const { rows } = await sql<{ stored: string }>`
      select row_to_json(m)::text || (select coalesce(json_agg(r)::text, '') from sms_recipients r
                                      where r.tenant_id = m.tenant_id and r.sms_id = m.id) as stored
      from sms_messages m where m.id = ${smsId}`.execute(bed.iso.owner)
    return rows[0]!.stored
  }

  const sentFor = (smsId: number) => bed.fake.sentMessages.filter((message) => message.customFields.svcSmsId === String(smsId))
  const callsCarrying = (smsId: number) =>
    bed.fake.received.filter((request) => request.body.messages.some((message) => message.customFields.svcSmsId === String(smsId)))

  const contentOf = async (smsId: number) =>
    (await bed.iso.owner.selectFrom('smsMessages').select(['content', 'kind', 'senderId', 'senderNumber']).where('id', '=', smsId).executeTakeFirstOrThrow())

  async function until(condition: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met within 10 s')
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }

  it('is handed to the provider at once after a kick, with its text as written, the phone and the system sender', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const { code } = newCode()
    const text = `[Academy {name}] code ${code}`
    const smsId = await enqueue(tenant, { to: '010-2222-3333', text })
    service.dispatcher.kick()
    await until(async () => sentFor(smsId).length > 0)

    const sent = sentFor(smsId)
    expect(sent.map((message) => [message.to, message.from, message.text, message.type])).toEqual([['01022223333', SYSTEM_SENDER, text, 'SMS']])
    await until(async () => (await messageState(bed.iso.owner, smsId)).status === 'DISPATCHED')
    expect(await contentOf(smsId)).toMatchObject({ kind: 'VERIFICATION_CODE', senderId: null, senderNumber: SYSTEM_SENDER })
  })

  it("is sent from the tenant's APPROVED number when no system sender is set", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await enqueue(tenant, { to: '01022223333', text: `code ${newCode().code}` }, { systemSender: null })
    await service.dispatcher.runOnce()
    expect(sentFor(smsId).map((message) => message.from)).toEqual([
      '0212345678',
    ])
  })

  it("goes out from the system sender while the tenant's own number awaits approval (a staff send would be held)", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    await bed.iso.owner.updateTable('smsSenderSettings').set({ registrationStatus: 'PENDING' }).where('tenantId', '=', tenant.tenantId).execute()
    const staffId = await insertPendingMessage(bed.iso.owner, tenant)
    const smsId = await enqueue(tenant, { to: '01022223333', text: `code ${newCode().code}` })
    await service.dispatcher.runOnce()
    expect(sentFor(smsId).map((message) => message.from)).toEqual([
      SYSTEM_SENDER,
    ])
    expect(await messageState(bed.iso.owner, staffId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })
    // Cleared, so the held staff message does not stay due for the file's later tests.
    await bed.iso.owner.deleteFrom('smsMessages').where('id', '=', staffId).execute()
  })

  it('is refused with SENDER_SETTING_NOT_APPROVED on the live provider with neither sender, and stores nothing', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    await bed.iso.owner.updateTable('smsSenderSettings').set({ registrationStatus: 'PENDING' }).where('tenantId', '=', tenant.tenantId).execute()
    await expect(enqueue(tenant, { to: '01022223333', text: 'code 1' }, { systemSender: null })).rejects.toMatchObject({
      code: 'SENDER_SETTING_NOT_APPROVED',
    })
    expect(await bed.iso.owner.selectFrom('smsMessages').select('id').where('tenantId', '=', tenant.tenantId).execute()).toEqual([])
  })

  it('never appears in the history list, its search, its totals or the detail route (404)', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const later = new Date(Date.now() + 3_600_000)
    const staffId = await insertPendingMessage(bed.iso.owner, { ...tenant, scheduledAt: later, nextAttemptAt: later })
    const { code } = newCode()
    const systemId = await enqueue(tenant, { to: '01022223333', text: `Notice code ${code}` })
    const headers = await staffHeaders(tenant)

    const list = await service.inject({ method: 'GET', url: '/v1/sms/history', headers })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toMatchObject({ total: 1, items: [{ id: staffId }] })
    const search = await service.inject({ method: 'GET', url: `/v1/sms/history?q=${code}`, headers })
    expect(search.json()).toMatchObject({ total: 0, items: [] })
    const byStatus = await service.inject({ method: 'GET', url: '/v1/sms/history?status=PENDING', headers })
    expect(byStatus.json()).toMatchObject({ total: 1, items: [{ id: staffId }] })
    const detail = await service.inject({ method: 'GET', url: `/v1/sms/history/${systemId}`, headers })
    expect(detail.statusCode).toBe(404)
    expect(detail.json().code).toBe('SMS_NOT_FOUND')
    const cancel = await service.inject({ method: 'POST', url: `/v1/sms/history/${systemId}/cancel`, headers })
    expect(cancel.json().code).toBe('SMS_NOT_FOUND')
    const counters = await bed.iso.owner.selectFrom('smsMessageCounts').select(['senderId', 'messages']).where('tenantId', '=', tenant.tenantId).execute()
    expect(counters).toEqual([{ senderId: tenant.senderId, messages: 1 }])
  })

  it("counts one recipient against the tenant's daily quota; at the quota it is refused as a send is, storing nothing", async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    await enqueue(tenant, { to: '01022223333', text: 'code 1' }, { dailyQuota: { limit: 2, timeZone: 'Asia/Seoul' } })
    const usage = await bed.iso.owner.selectFrom('smsDailyUsage').select('recipients').where('tenantId', '=', tenant.tenantId).executeTakeFirst()
    expect(usage).toEqual({ recipients: 1 })
    await enqueue(tenant, { to: '01022223333', text: 'code 2' }, { dailyQuota: { limit: 2, timeZone: 'Asia/Seoul' } })

    const refused = await enqueue(tenant, { to: '01022223333', text: 'code 3' }, { dailyQuota: { limit: 2, timeZone: 'Asia/Seoul' } }).catch((error: unknown) => error)
    expect(catalogErrorFor(refused)).toMatchObject({ code: 'SMS_QUOTA_EXCEEDED', status: 429 })
    const stored = await bed.iso.owner.selectFrom('smsMessages').select('content').where('tenantId', '=', tenant.tenantId).orderBy('id').execute()
    expect(stored.map((row) => row.content)).toEqual(['code 1', 'code 2'])
  })

  it('keeps no code in the database once the provider has it, nor in any log line or metric of the whole flow', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const { code, pattern } = newCode()
    const linesBefore = logLines.length
    // A first attempt fails (retried, so the text is still needed), the second is accepted, then delivered.
    bed.fake.fail({ status: 503 }, 1)
    const smsId = await enqueue(tenant, { to: '01022223333', text: `Your code is ${code}` })
    await service.dispatcher.runOnce()
    expect(await contentOf(smsId)).toMatchObject({ content: `Your code is ${code}` })
    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await service.dispatcher.runOnce()
    const sent = sentFor(smsId)
    expect(sent.map((message) => message.text)).toEqual([`Your code is ${code}`])
    const report = await service.inject({
      method: 'POST',
      url: '/v1/sms/solapi/webhook',
      headers: { 'x-provider-secret': providerSecretHeader(WEBHOOK_TOKEN) },
      payload: deliveryReportBody(sent),
    })
    expect(report.json()).toEqual({ processed: 1, ignored: 0 })
    const metrics = await service.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.statusCode).toBe(200)

    expect((await messageState(bed.iso.owner, smsId)).status).toBe('SENT')
    const stored = await storedRows(smsId)
    expect(stored).toContain('"content":""')
    expect(stored).not.toMatch(pattern)
    const flowLog = logLines.slice(linesBefore).join('\n')
    // The capture works: the flow's dispatch batches were logged.
    expect(flowLog).toContain('dispatch batch')
    expect(flowLog).not.toMatch(pattern)
    expect(metrics.body).not.toMatch(pattern)
  })

  it('keeps its text after a failed attempt and sends it on the retry', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const text = `code ${newCode().code}`
    bed.fake.fail({ status: 500 }, 1)
    const smsId = await enqueue(tenant, { to: '01022223333', text, expiresAt: new Date(Date.now() + 3_600_000) })
    await service.dispatcher.runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })
    expect((await contentOf(smsId)).content).toBe(text)

    await bed.iso.owner.updateTable('smsMessages').set({ nextAttemptAt: new Date() }).where('id', '=', smsId).execute()
    await service.dispatcher.runOnce()
    expect(sentFor(smsId).map((message) => message.text)).toEqual([text])
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'DISPATCHED', dispatchAttempts: 2 })
    expect((await contentOf(smsId)).content).toBe('')
  })

  it('is never sent once expired: it ends FAILED saying so, its text erased', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const { code, pattern } = newCode()
    const smsId = await enqueue(tenant, { to: '01022223333', text: `code ${code}`, expiresAt: new Date(Date.now() - 1000) })
    await service.dispatcher.runOnce()
    expect(callsCarrying(smsId)).toEqual([])
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 0, failCount: 1, claimToken: null })
    expect(state.lastProviderError).toMatch(/^expired at .* before it was handed to the provider$/)
    expect(state.recipients).toMatchObject([{ deliveryStatus: 'FAILED' }])
    expect(await storedRows(smsId)).not.toMatch(pattern)
  })

  it('is not retried after it expired: a retry it would outlive is not scheduled', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const text = `code ${newCode().code}`
    // Retries come 30 s or more after a failure; this one expires in 10 s.
    bed.fake.fail({ status: 503 }, 1)
    const smsId = await enqueue(tenant, { to: '01022223333', text, expiresAt: new Date(Date.now() + 10_000) })
    await service.dispatcher.runOnce()
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'FAILED', dispatchAttempts: 1, failCount: 1 })
    expect(state.lastProviderError).toMatch(/503/)
    const recipient = await bed.iso.owner.selectFrom('smsRecipients').select('providerStatusMessage').where('smsId', '=', smsId).executeTakeFirstOrThrow()
    expect(recipient.providerStatusMessage).toMatch(/^expired before its next attempt/)
    expect((await contentOf(smsId)).content).toBe('')
  })

  it('is not sent on a retry that comes after it expired', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    bed.fake.fail({ status: 503 }, 1)
    const smsId = await enqueue(tenant, { to: '01022223333', text: `code ${newCode().code}`, expiresAt: new Date(Date.now() + 3_600_000) })
    await service.dispatcher.runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 1 })
    // Time passes: the code expires before its retry is due.
    await bed.iso.owner
      .updateTable('smsMessages')
      .set({ discardAfter: new Date(Date.now() - 1000), nextAttemptAt: new Date() })
      .where('id', '=', smsId)
      .execute()
    const callsBefore = bed.fake.calls.length
    await service.dispatcher.runOnce()
    expect(bed.fake.calls.length).toBe(callsBefore)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'FAILED', dispatchAttempts: 1 })
    expect((await contentOf(smsId)).content).toBe('')
  })

  it('is held while its tenant is suspended, like a bulk message, and ends FAILED once expired while held', async () => {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await enqueue(tenant, { to: '01022223333', text: `code ${newCode().code}`, expiresAt: new Date(Date.now() + 3_600_000) })
    await bed.iso.owner.updateTable('tenants').set({ status: 'SUSPENDED' }).where('id', '=', tenant.tenantId).execute()
    await service.dispatcher.runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PENDING', dispatchAttempts: 0 })

    await bed.iso.owner.updateTable('smsMessages').set({ discardAfter: new Date(Date.now() - 1000) }).where('id', '=', smsId).execute()
    await service.dispatcher.runOnce()
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'FAILED', dispatchAttempts: 0 })
    expect((await contentOf(smsId)).content).toBe('')
    expect(callsCarrying(smsId)).toEqual([])
  })
})

describe('the mock provider and system messages', () => {
  const text = 'Your code is 482913'
  const request = (kind: SendRequest['kind']): SendRequest => ({
    tenantSlug: 'acme',
    smsId: 7,
    kind,
    messages: [{ recipientIndex: 0, to: '01022223333', from: '', text, type: 'SMS' }],
  })

  async function loggedBy(nodeEnv: 'development' | 'test' | 'production', kind: SendRequest['kind']): Promise<string[]> {
    const lines: string[] = []
    const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) })
    const env = loadEnv({ NODE_ENV: nodeEnv, SVC_JWT_SECRET: 'a-secret-of-at-least-thirty-two-bytes!!' })
    const provider = createProvider(env, log)
    const created = await provider.createGroup(request(kind))
    if (created.kind !== 'ok') throw new Error('the mock refused to create a group')
    expect(await provider.addMessages(created.groupId, request(kind))).toMatchObject({ kind: 'ok' })
    expect(await provider.sendGroup(created.groupId)).toMatchObject({ kind: 'ok' })
    return lines
  }

  it('writes the text of a system message to the log with NODE_ENV=development, so a developer can try the flows', async () => {
    const lines = await loggedBy('development', 'VERIFICATION_CODE')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ smsId: 7, kind: 'VERIFICATION_CODE', to: '010-****-3333', text })
  })

  it('logs nothing with any other NODE_ENV, and never the text of a staff message', async () => {
    expect(await loggedBy('test', 'VERIFICATION_CODE')).toEqual([])
    expect(await loggedBy('production', 'VERIFICATION_CODE')).toEqual([])
    expect(await loggedBy('development', 'STAFF')).toEqual([])
  })
})
