import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

describe('send through the API, dispatched by the mock provider', () => {
  let iso: IsolatedDatabase

  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso.drop()
  })
  const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url, SVC_SMS_DISPATCHER: 'on' } }))

  it('reaches SENT with every recipient DELIVERED after the send commits', async () => {
    const staff = await insertTenantAndSender(iso.owner)
    const { access } = await issueTokenPair(
      app.current.tokenKeys,
      { userId: staff.senderId, tenantId: staff.tenantId, tenantSlug: staff.slug, role: 'MANAGER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    const headers = { authorization: `Bearer ${access.token}`, 'idempotency-key': randomUUID() }
    const sent = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers,
      payload: { title: 'Notice', content: 'Hello {name}', recipients: [{ phone: '010-1234-5678', name: 'Kim' }, { phone: '01098765432', name: 'Lee' }] },
    })
    expect(sent.statusCode).toBe(201)
    expect(sent.json().status).toBe('PENDING')

    const deadline = Date.now() + 10_000
    let detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers })
    while (detail.json().status !== 'SENT' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      detail = await app.current.inject({ method: 'GET', url: `/v1/sms/history/${sent.json().id}`, headers })
    }
    expect(detail.json()).toMatchObject({ status: 'SENT', successCount: 2, failCount: 0, content: 'Hello {name}' })
    expect(detail.json().sentAt).not.toBeNull()
    expect(detail.json().recipients.map((recipient: { deliveryStatus: string; phone: string }) => [recipient.phone, recipient.deliveryStatus])).toEqual([
      ['010-****-5678', 'DELIVERED'],
      ['010-****-5432', 'DELIVERED'],
    ])
  })
})
