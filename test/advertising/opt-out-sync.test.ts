import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import type { Clock } from '../../lib/clock.js'
import { syncTenant, RefusalListError } from '../../lib/advertising/opt-out-sync.js'
import { createExtSmsRefusalList } from '../../lib/dispatch/providers/extsms-refusals.js'
import type { RefusalList } from '../../lib/dispatch/providers/refusal-list.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { fakeExtSmsCredentials, useDispatchTestBed } from '../dispatch/dispatch-test-bed.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { seoul, seoulDate } from './advertisement-send-fixtures.js'
import { recordConsents } from './advertising-fixtures.js'

// The provider's 080 refusal list (the loopback fake, over signed HTTP) read into each academy's opt-out list.
// Every academy here has a sender number of its own, as the provider account requires.

const NOON: Clock = () => new Date('2027-03-16T12:00:00+09:00')
const OPT_OUT_NUMBER = '0801234567'
const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, seconds))

describe("the provider's 080 refusal list and the opt-out list", () => {
  const bed = useDispatchTestBed(4)
  const app = useTestApp(() => ({
    env: {
      DATABASE_URL: bed.iso.url,
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: bed.fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'opt-out-sync-webhook',
    },
    clock: NOON,
  }))

  let senderSeq = 0
  /** An academy with its own APPROVED sender number and (unless null) an opt-out number, and its MANAGER's headers. */
  async function academy(optOutNumber: string | null = OPT_OUT_NUMBER, registrationStatus: 'APPROVED' | 'PENDING' = 'APPROVED') {
    const staff = await insertTenantAndSender(bed.iso.owner)
    senderSeq += 1
    const senderNumber = `02${String(7_000_000 + senderSeq + Math.floor(Math.random() * 1_000_000))}`
    await bed.iso.owner.updateTable('smsSenderSettings').set({ senderNumber, registrationStatus }).where('tenantId', '=', staff.tenantId).execute()
    if (optOutNumber !== null) await bed.iso.owner.insertInto('smsAdvertisingSettings').values({ tenantId: staff.tenantId, optOutNumber }).execute()
    const { access } = await issueTokenPair(
      app.current.tokenKeys,
      { userId: staff.senderId, tenantId: staff.tenantId, tenantSlug: staff.slug, role: 'MANAGER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    return { tenantId: staff.tenantId, senderNumber, headers: { authorization: `Bearer ${access.token}` } }
  }
  type Academy = Awaited<ReturnType<typeof academy>>

  const optOuts = (tenantId: number) =>
    bed.iso.owner.selectFrom('smsOptOuts').select(['phone', 'source', 'createdBy']).where('tenantId', '=', tenantId).orderBy('phone').execute()
  const readsOf = (who: Academy) => bed.fake.refusals.reads.filter((read) => read.senderNumber === who.senderNumber)
  const list = (): RefusalList => createExtSmsRefusalList({ ...fakeExtSmsCredentials, baseUrl: bed.fake.url, timeoutMs: 2000 })
  const job = (pageSize = 2) => ({ db: app.current.db, list: list(), pageSize })
  const refuse = (who: Academy, count: number, from: number, phonePrefix: string) =>
    bed.fake.refusals.add(
      ...Array.from({ length: count }, (_, index) => ({
        senderNumber: who.senderNumber,
        recipientNumber: `${phonePrefix}${String(index).padStart(4, '0')}`,
        dateCreated: at(from + index),
      })),
    )

  it('lists a refusal as PROVIDER_080, audited, and leaves that number out of a scheduled advertisement at hand-over', async () => {
    const who = await academy()
    await recordConsents({ id: who.tenantId }, ['010-9100-0001', '010-9100-0002', '010-9100-0003'], { db: bed.iso.owner })
    const accepted = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...who.headers, 'idempotency-key': randomUUID() },
      payload: {
        title: 'Winter',
        content: 'Winter class',
        purpose: 'ADVERTISEMENT',
        scheduledAt: seoul(`${seoulDate(2)}T10:00:00`).toISOString(),
        recipients: [{ phone: '010-9100-0001' }, { phone: '010-9100-0002' }, { phone: '010-9100-0003' }],
      },
    })
    expect(accepted.statusCode, accepted.body).toBe(201)
    const smsId = accepted.json().id as number

    bed.fake.refusals.add({ senderNumber: who.senderNumber, recipientNumber: '01091000002', dateCreated: at(1) })
    await app.current.advertising.syncOptOuts()
    expect(await optOuts(who.tenantId)).toEqual([{ phone: '01091000002', source: 'PROVIDER_080', createdBy: null }])
    const events = await bed.iso.owner
      .selectFrom('auditEvents')
      .select(['type', 'actorId', 'details'])
      .where('tenantId', '=', who.tenantId)
      .where('type', '=', 'OPT_OUT_ADDED')
      .execute()
    expect(events).toEqual([{ type: 'OPT_OUT_ADDED', actorId: null, details: { phone: '010-****-0002', source: 'PROVIDER_080' } }])
    const page = await app.current.inject({ method: 'GET', url: '/v1/sms/opt-outs', headers: who.headers })
    expect(page.json().items).toEqual([{ phone: '010-****-0002', createdAt: expect.any(String), source: 'PROVIDER_080' }])

    // Its time comes: the refused number is left out when it is handed over, its price and quota given back.
    await sql`update sms_messages set scheduled_at = now() - interval '1 minute', next_attempt_at = now() - interval '1 minute'
      where id = ${smsId}`.execute(bed.iso.owner)
    expect(await bed.dispatcher({ clock: NOON }).runOnce()).toBe(1)
    expect(bed.sentFor(smsId).map((message) => message.to)).toEqual(['01091000001', '01091000003'])
    const recipients = await bed.iso.owner.selectFrom('smsRecipients').select(['phone', 'deliveryStatus']).where('smsId', '=', smsId).orderBy('recipientIndex').execute()
    expect(recipients.map((row) => [row.phone, row.deliveryStatus])).toEqual([
      ['01091000001', 'DISPATCHED'],
      ['01091000002', 'OPTED_OUT'],
      ['01091000003', 'DISPATCHED'],
    ])
    expect(await bed.iso.owner.selectFrom('smsMessages').select(['optedOutCount', 'estimatedSegments']).where('id', '=', smsId).executeTakeFirst()).toEqual({
      optedOutCount: 1,
      estimatedSegments: 2,
    })
  })

  it('reads across three pages, then only what is new, never listing a number twice', async () => {
    const who = await academy()
    refuse(who, 5, 100, '0109200')
    expect(await syncTenant(job(), who.tenantId)).toBe(5)
    expect(readsOf(who).map((read) => [read.page, read.since, read.startKey === null])).toEqual([
      [1, null, true],
      [2, null, false],
      [3, null, false],
    ])
    expect((await optOuts(who.tenantId)).map((row) => row.phone)).toEqual(['01092000000', '01092000001', '01092000002', '01092000003', '01092000004'])

    // A newer refusal, and one of a number listed already: the next reading starts at the newest refusal seen.
    bed.fake.refusals.add(
      { senderNumber: who.senderNumber, recipientNumber: '01092000009', dateCreated: at(200) },
      { senderNumber: who.senderNumber, recipientNumber: '01092000001', dateCreated: at(201) },
    )
    const before = readsOf(who).length
    expect(await syncTenant(job(), who.tenantId)).toBe(1)
    expect(readsOf(who).slice(before).map((read) => [read.page, read.since])).toEqual([
      [1, at(104).toISOString()],
      [2, at(104).toISOString()],
    ])
    expect(await syncTenant(job(), who.tenantId)).toBe(0)
    expect(await optOuts(who.tenantId)).toHaveLength(6)
    const added = await bed.iso.owner.selectFrom('auditEvents').select('type').where('tenantId', '=', who.tenantId).execute()
    expect(added).toHaveLength(6)
  })

  it('keeps page one when the provider fails on page two, and goes on from page two at the next run', async () => {
    const who = await academy()
    refuse(who, 5, 300, '0109300')
    bed.fake.refusals.failPage(2, 503)
    await expect(syncTenant(job(), who.tenantId)).rejects.toBeInstanceOf(RefusalListError)
    expect((await optOuts(who.tenantId)).map((row) => row.phone)).toEqual(['01093000000', '01093000001'])
    const secondPageKey = await bed.iso.owner.selectFrom('smsOptOutSyncs').select(['nextKey', 'claimToken']).where('tenantId', '=', who.tenantId).executeTakeFirstOrThrow()
    expect(secondPageKey).toEqual({ nextKey: expect.any(String), claimToken: null })

    const before = readsOf(who).length
    expect(await syncTenant(job(), who.tenantId)).toBe(3)
    expect(readsOf(who).slice(before).map((read) => [read.page, read.startKey])).toEqual([
      [2, secondPageKey.nextKey],
      [3, expect.any(String)],
    ])
    expect(await optOuts(who.tenantId)).toHaveLength(5)
  })

  it("never lets another academy's sender number touch this academy's list", async () => {
    const mine = await academy()
    const theirs = await academy()
    bed.fake.refusals.add({ senderNumber: theirs.senderNumber, recipientNumber: '01094000001', dateCreated: at(400) })
    await app.current.advertising.syncOptOuts()
    expect(await optOuts(mine.tenantId)).toEqual([])
    expect(await optOuts(theirs.tenantId)).toEqual([{ phone: '01094000001', source: 'PROVIDER_080', createdBy: null }])

    // Whatever the provider answers: an entry of another sender number in this academy's pages is ignored.
    const careless: RefusalList = {
      name: 'extsms',
      async readPage() {
        return { kind: 'ok', nextKey: null, refusals: [{ handleKey: 'x', senderNumber: theirs.senderNumber, recipientNumber: '01094000002', dateCreated: at(401) }] }
      },
    }
    expect(await syncTenant({ db: app.current.db, list: careless }, mine.tenantId)).toBe(0)
    expect(await optOuts(mine.tenantId)).toEqual([])
  })

  it('reads a tenant with one reader at a time: a live claim of another instance is left alone until it lapses', async () => {
    const who = await academy()
    refuse(who, 1, 500, '0109500')
    await bed.iso.owner
      .insertInto('smsOptOutSyncs')
      .values({ tenantId: who.tenantId, senderNumber: who.senderNumber, claimToken: randomUUID(), claimedUntil: new Date(Date.now() + 60_000) })
      .execute()
    expect(await syncTenant(job(), who.tenantId)).toBeNull()
    expect(readsOf(who)).toEqual([])
    await bed.iso.owner.updateTable('smsOptOutSyncs').set({ claimedUntil: new Date(Date.now() - 1000) }).where('tenantId', '=', who.tenantId).execute()
    expect(await syncTenant(job(), who.tenantId)).toBe(1)
  })

  it('reads no list for an academy without an opt-out number or without an APPROVED sender number', async () => {
    const noNumber = await academy(null)
    const pending = await academy(OPT_OUT_NUMBER, 'PENDING')
    bed.fake.refusals.add(
      { senderNumber: noNumber.senderNumber, recipientNumber: '01096000001', dateCreated: at(600) },
      { senderNumber: pending.senderNumber, recipientNumber: '01096000002', dateCreated: at(601) },
    )
    await app.current.advertising.syncOptOuts()
    expect(readsOf(noNumber)).toEqual([])
    expect(readsOf(pending)).toEqual([])
    expect(await optOuts(noNumber.tenantId)).toEqual([])
    expect(await optOuts(pending.tenantId)).toEqual([])
  })
})
