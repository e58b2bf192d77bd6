import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('sms_message_counts', () => {
  useTestApp()

  async function insertMessages(tenantId: number, senderId: number, count: number): Promise<void> {
    await sql`
      insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
                                estimated_segments, unit_price, total_price, provider)
      select ${tenantId}, ${senderId}, 'CUSTOM', 1, 't', 'c', 'SMS', 1, 20, 20, 'mock' from generate_series(1, ${count})`.execute(owner())
  }

  const counters = async (tenantId: number) =>
    (await owner().selectFrom('smsMessageCounts').select(['senderId', 'messages']).where('tenantId', '=', tenantId).orderBy('senderId').execute())

  const actual = async (tenantId: number) =>
    (await owner().selectFrom('smsMessages').select((eb) => ['senderId', eb.fn.countAll<number>().as('messages')]).where('tenantId', '=', tenantId).groupBy('senderId').orderBy('senderId').execute())

  it('stay equal to the real counts per sender through multi-row inserts and deletes', async () => {
    const tenant = await createTenant()
    const [a, b] = await Promise.all([insertUser(tenant, { role: 'MANAGER' }), insertUser(tenant, { role: 'INSTRUCTOR' })])
    await insertMessages(tenant.id, a.id, 7)
    await insertMessages(tenant.id, b.id, 3)
    await insertMessages(tenant.id, a.id, 1)
    expect(await counters(tenant.id)).toEqual(await actual(tenant.id))
    expect(await counters(tenant.id)).toEqual([
      { senderId: a.id, messages: 8 },
      { senderId: b.id, messages: 3 },
    ].sort((x, y) => x.senderId - y.senderId))

    const victims = await owner().selectFrom('smsMessages').select('id').where('senderId', '=', a.id).limit(2).execute()
    await owner().deleteFrom('smsMessages').where('id', 'in', victims.map((row) => row.id)).execute()
    expect(await counters(tenant.id)).toEqual(await actual(tenant.id))
  })
})
