import { describe, expect, it } from 'vitest'
import { deliveryReport, deliveryReportBody, providerSecretHeader, type FakeSentMessage } from '../support/fakes/extsms-server.js'
import { insertPendingMessage, insertTenantAndSender, messageState } from '../support/dispatch-fixtures.js'
import { fakeExtSmsCredentials, useProviderTestBed } from './dispatch-test-bed.js'
import { useTestApp } from '../support/helper.js'

const WEBHOOK = '/v1/sms/solapi/webhook'
const TOKEN = 'test-secret'

describe('POST /v1/sms/solapi/webhook', () => {
  const bed = useProviderTestBed()

  const app = useTestApp(() => ({
    env: {
      DATABASE_URL: bed.iso.url,
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: bed.fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: TOKEN,
    },
  }))

  /** A message of `recipients` recipients, dispatched to the fake provider; returns what the provider got. */
  async function dispatched(recipients = 2) {
    const tenant = await insertTenantAndSender(bed.iso.owner)
    const smsId = await insertPendingMessage(bed.iso.owner, {
      ...tenant,
      recipients: Array.from({ length: recipients }, (_, index) => ({ phone: `0101234${String(index).padStart(4, '0')}`, name: `n${index}` })),
    })
    await app.current.dispatcher.runOnce()
    const sent = bed.fake.sentMessages.filter((message) => message.customFields.svcSmsId === String(smsId))
    expect(sent).toHaveLength(recipients)
    return { smsId, sent, tenant }
  }

  const post = (payload: unknown, secret: string | null = providerSecretHeader(TOKEN)) =>
    app.current.inject({ method: 'POST', url: WEBHOOK, payload: payload as object, headers: secret === null ? {} : { 'x-provider-secret': secret } })

  it('applies reports and settles the message SENT when every recipient is delivered', async () => {
    const { smsId, sent } = await dispatched()
    const response = await post(deliveryReportBody(sent))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ processed: 2, ignored: 0 })
    const state = await messageState(bed.iso.owner, smsId)
    expect(state).toMatchObject({ status: 'SENT', successCount: 2, failCount: 0 })
    expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerStatusCode])).toEqual([
      ['DELIVERED', '4000'],
      ['DELIVERED', '4000'],
    ])
  })

  it('accepts envelope and flat reports, and settles PARTIAL or FAILED by the aggregate', async () => {
    const partial = await dispatched()
    await post([deliveryReport(partial.sent[0]!, { envelope: true }), deliveryReport(partial.sent[1]!, { envelope: false, statusCode: '3043' })])
    expect(await messageState(bed.iso.owner, partial.smsId)).toMatchObject({ status: 'PARTIAL', successCount: 1, failCount: 1 })

    const failed = await dispatched()
    await post(deliveryReportBody(failed.sent, { statusCode: '3050', envelope: false }))
    expect(await messageState(bed.iso.owner, failed.smsId)).toMatchObject({ status: 'FAILED', successCount: 0, failCount: 2 })
  })

  it('keeps the message DISPATCHED while a recipient is still pending at the provider', async () => {
    const { smsId, sent } = await dispatched()
    await post([deliveryReport(sent[0]!), deliveryReport(sent[1]!, { statusCode: '3000' })])
    const state = await messageState(bed.iso.owner, smsId)
    expect(state.status).toBe('DISPATCHED')
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DELIVERED', 'DISPATCHED'])
  })

  it('refuses a missing or wrong secret', async () => {
    const { sent } = await dispatched(1)
    for (const secret of [null, '', 'wrong', providerSecretHeader('other-token'), providerSecretHeader(TOKEN).toUpperCase()]) {
      const response = await post(deliveryReportBody(sent), secret)
      expect({ secret, status: response.statusCode }).toEqual({ secret, status: 401 })
      expect(response.json().code).toBe('WEBHOOK_SECRET_INVALID')
    }
  })

  it('answers 400 to anything but a JSON array', async () => {
    for (const payload of [{ messageId: 'x' }, 'text']) {
      const response = await app.current.inject({ method: 'POST', url: WEBHOOK, headers: { 'x-provider-secret': providerSecretHeader(TOKEN), 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
      expect(response.statusCode).toBe(400)
      expect(response.json().code).toBe('VALIDATION_FAILED')
    }
    const malformed = await app.current.inject({ method: 'POST', url: WEBHOOK, headers: { 'x-provider-secret': providerSecretHeader(TOKEN), 'content-type': 'application/json' }, payload: '[{' })
    expect(malformed.statusCode).toBe(400)
  })

  it('ignores entries it cannot verify and never applies them elsewhere', async () => {
    const { smsId, sent, tenant } = await dispatched(2)
    const [first, second] = sent as [FakeSentMessage, FakeSentMessage]
    const other = await dispatched(1)
    const body = [
      42,
      { data: { statusCode: '4000' } },
      deliveryReport({ ...first, customFields: { ...first.customFields, svcTenant: 'no-such-tenant' } }),
      deliveryReport({ ...first, customFields: { ...first.customFields, svcSmsId: '999999999' } }),
      deliveryReport({ ...first, customFields: { ...first.customFields, svcRecipient: '7' } }),
      deliveryReport({ ...first, messageId: 'M4V20260101000000WRONGWRONGWRONG' }),
      deliveryReport({ ...second, groupId: 'G4V20260101000000WRONGWRONGWRONG' }),
      // Tenant of another message: same ids, other tenant slug.
      deliveryReport({ ...first, customFields: { ...first.customFields, svcTenant: other.tenant.slug } }),
    ]
    const response = await post(body)
    expect(response.json()).toEqual({ processed: 0, ignored: body.length })
    const state = await messageState(bed.iso.owner, smsId)
    expect(state.recipients.map((recipient) => recipient.deliveryStatus)).toEqual(['DISPATCHED', 'DISPATCHED'])
    expect(state.status).toBe('DISPATCHED')
    expect((await messageState(bed.iso.owner, other.smsId)).recipients[0]!.deliveryStatus).toBe('DISPATCHED')
    expect(tenant.slug).not.toBe(other.tenant.slug)
  })

  it('is idempotent and order-tolerant: duplicates and stale reports change nothing', async () => {
    const { smsId, sent } = await dispatched(1)
    const delivered = deliveryReportBody(sent)
    expect((await post(delivered)).json()).toEqual({ processed: 1, ignored: 0 })
    expect((await post(delivered)).json()).toEqual({ processed: 0, ignored: 1 })
    expect((await post(deliveryReportBody(sent, { statusCode: '3000' }))).json()).toEqual({ processed: 0, ignored: 1 })
    expect((await post(deliveryReportBody(sent, { statusCode: '3043' }))).json()).toEqual({ processed: 0, ignored: 1 })
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'SENT', successCount: 1, failCount: 0 })
  })

  it('records the group id from a report when none was stored, and keeps a stored one a report omits', async () => {
    const { smsId, sent } = await dispatched(2)
    await bed.iso.owner.updateTable('smsMessages').set({ providerGroupId: null }).where('id', '=', smsId).execute()
    expect((await post([deliveryReport(sent[0]!)])).json()).toEqual({ processed: 1, ignored: 0 })
    expect((await messageState(bed.iso.owner, smsId)).providerGroupId).toBe(sent[0]!.groupId)

    const withoutGroup = deliveryReport(sent[1]!) as { data: Record<string, unknown> }
    delete withoutGroup.data.groupId
    expect((await post([withoutGroup])).json()).toEqual({ processed: 1, ignored: 0 })
    expect((await messageState(bed.iso.owner, smsId)).providerGroupId).toBe(sent[0]!.groupId)
  })

  it('keeps counts exact under concurrent reports for one message', async () => {
    const { smsId, sent } = await dispatched(20)
    const responses = await Promise.all(
      sent.map((message, index) => post([deliveryReport(message, { statusCode: index % 4 === 0 ? '3040' : '4000' })])),
    )
    expect(responses.every((response) => response.statusCode === 200)).toBe(true)
    expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'PARTIAL', successCount: 15, failCount: 5 })
  })

  describe('reports matched to the ids stored per recipient', () => {
    /** A scheduled message still PENDING: never handed to the provider. */
    async function notHandedOver() {
      const tenant = await insertTenantAndSender(bed.iso.owner)
      const later = new Date(Date.now() + 3_600_000)
      const smsId = await insertPendingMessage(bed.iso.owner, { ...tenant, scheduledAt: later, nextAttemptAt: later })
      const report = (recipient: number, messageId = `M4V20260101000000${String(recipient).padStart(15, 'X')}`) =>
        deliveryReport({
          messageId,
          groupId: 'G4V20260101000000GGGGGGGGGGGGGGG',
          to: '01012345678',
          from: '0212345678',
          type: 'SMS',
          customFields: { svcTenant: tenant.slug, svcSmsId: String(smsId), svcRecipient: String(recipient) },
        })
      return { smsId, report }
    }

    /** A message of two recipients whose provider answer confirmed only recipient 0, re-sent: recipient 1's send. */
    async function resentInNewGroup() {
      const { smsId, sent, tenant } = await dispatched(2)
      // Recipient 1 is PENDING again and the message due, as after a partial answer.
      await bed.iso.owner.updateTable('smsRecipients').set({ deliveryStatus: 'PENDING', providerMessageId: null, providerGroupId: null, providerStatusCode: null })
        .where('tenantId', '=', tenant.tenantId).where('smsId', '=', smsId).where('recipientIndex', '=', 1).execute()
      await bed.iso.owner.updateTable('smsMessages').set({ status: 'PENDING', nextAttemptAt: new Date(Date.now() - 1000) })
        .where('tenantId', '=', tenant.tenantId).where('id', '=', smsId).execute()
      await app.current.dispatcher.runOnce()
      const resent = bed.fake.sentMessages.filter((message) => message.customFields.svcSmsId === String(smsId)).at(-1)!
      return { smsId, sent, resent }
    }

    it('ignores and counts reports for recipients never handed to the provider', async () => {
      const { smsId, report } = await notHandedOver()
      const response = await post([report(0), report(1, 'M'.repeat(100))])
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ processed: 0, ignored: 2 })
      const state = await messageState(bed.iso.owner, smsId)
      expect(state).toMatchObject({ status: 'PENDING', successCount: 0, failCount: 0 })
      expect(state.recipients.map((recipient) => [recipient.deliveryStatus, recipient.providerMessageId])).toEqual([
        ['PENDING', null],
        ['PENDING', null],
      ])
    })

    it('ignores each bad entry on its own: over-long ids or status codes never fail the batch', async () => {
      const { report } = await notHandedOver()
      const { smsId, sent } = await dispatched(3)
      const [first, second, third] = sent as [FakeSentMessage, FakeSentMessage, FakeSentMessage]
      const body = [
        report(0, 'M'.repeat(100)),
        deliveryReport(first),
        deliveryReport({ ...second, groupId: 'G'.repeat(100) }),
        deliveryReport(third, { statusCode: '4000'.repeat(10) }),
      ]
      const response = await post(body)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ processed: 1, ignored: 3 })
      expect((await messageState(bed.iso.owner, smsId)).recipients.map((recipient) => recipient.deliveryStatus)).toEqual([
        'DELIVERED',
        'DISPATCHED',
        'DISPATCHED',
      ])
    })

    it('applies reports of recipients re-sent in a new provider group after a partial answer, and settles the message', async () => {
      const { smsId, sent, resent } = await resentInNewGroup()
      expect(resent.customFields.svcRecipient).toBe('1')
      expect(resent.groupId).not.toBe(sent[0]!.groupId)

      const response = await post([deliveryReport(sent[0]!), deliveryReport(resent)])
      expect(response.json()).toEqual({ processed: 2, ignored: 0 })
      expect(await messageState(bed.iso.owner, smsId)).toMatchObject({ status: 'SENT', successCount: 2 })
    })

    it('ignores a report that names the other group of the same message', async () => {
      const { sent, resent } = await resentInNewGroup()
      // Recipient 1 went out in the second group; a report for it naming the first group is not about that send.
      const response = await post([deliveryReport({ ...resent, groupId: sent[0]!.groupId })])
      expect(response.json()).toEqual({ processed: 0, ignored: 1 })
    })
  })
})
