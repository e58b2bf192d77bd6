import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { refusalsAmong } from '../../db/repos/advertising/ad-consents.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'
import { recordConsents } from './advertising-fixtures.js'

const DAY_MS = 86_400_000
const ACADEMY = '해오름학원'
const OPT_OUT_NUMBER = '0801234567'

/** The notice's text by the documented rule (docs/api.md#consents-to-advertising), written out again here. */
function noticeText(consentedAt: Date): string {
  const [year, month, day] = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul' }).format(consentedAt).split('-').map(Number)
  return (
    `[${ACADEMY}] 광고성 정보 수신동의 안내\n` +
    `${year}년 ${month}월 ${day}일에 ${ACADEMY}의 광고성 정보 수신에 동의하셨으며, 동의는 유지됩니다.\n` +
    `수신을 원하지 않으시면 무료거부 ${OPT_OUT_NUMBER}`
  )
}

describe('the two-year notice of a consent to advertising', () => {
  // The dispatcher and the notice job work across tenants: a database of the file's own keeps other files away.
  let iso: IsolatedDatabase
  let now = new Date()
  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso?.drop()
  })
  // Two instances of the service over one database, on one clock.
  const options = () => ({ env: { DATABASE_URL: iso.url }, clock: () => new Date(now.getTime()) })
  const first = useTestApp(options)
  const second = useTestApp(options)

  async function academyWithConsents(optOutNumber: string | null = OPT_OUT_NUMBER) {
    const staff = await insertTenantAndSender(iso.owner)
    await iso.owner.updateTable('tenants').set({ name: ACADEMY }).where('id', '=', staff.tenantId).execute()
    await iso.owner.insertInto('smsAdvertisingSettings').values({ tenantId: staff.tenantId, optOutNumber }).execute()
    const { access } = await issueTokenPair(
      first.current.tokenKeys,
      { userId: staff.senderId, tenantId: staff.tenantId, tenantSlug: staff.slug, role: 'MANAGER', sid: randomUUID() },
      { accessSeconds: 600, refreshSeconds: 1200 },
    )
    return { tenant: { id: staff.tenantId }, headers: { authorization: `Bearer ${access.token}` } }
  }

  const consentsOf = (tenantId: number) =>
    iso.owner
      .selectFrom('smsAdConsents')
      .select(['phone', 'consentedAt', 'confirmedAt', 'noticeSmsId', 'noticeFor'])
      .where('tenantId', '=', tenantId)
      .orderBy('phone')
      .execute()
  const noticesOf = (tenantId: number) =>
    iso.owner
      .selectFrom('smsMessages as m')
      .innerJoin('smsRecipients as r', (join) => join.onRef('r.tenantId', '=', 'm.tenantId').onRef('r.smsId', '=', 'm.id'))
      .select(['m.id', 'm.kind', 'm.content', 'm.status', 'm.senderId', 'm.dispatchedAt', 'r.phone'])
      .where('m.tenantId', '=', tenantId)
      .orderBy('m.id')
      .execute()

  it('sends the notice once at 700 days although two instances race for it, with the name, the date and the 080 number', async () => {
    now = new Date()
    const { tenant, headers } = await academyWithConsents()
    const dueAt = new Date(now.getTime() - 700 * DAY_MS - 60_000)
    await recordConsents(tenant, ['010-8100-0001'], { at: dueAt, db: iso.owner })
    await recordConsents(tenant, ['010-8100-0002'], { at: new Date(now.getTime() - 699 * DAY_MS), db: iso.owner })
    await recordConsents(tenant, ['010-8100-0003'], { at: new Date(now.getTime() - 731 * DAY_MS), db: iso.owner })

    const rounds = await Promise.all([first.current.advertising.sendConsentNotices(), second.current.advertising.sendConsentNotices()])
    expect(rounds.map((round) => round.queued).sort()).toEqual([0, 1])
    const notices = await noticesOf(tenant.id)
    expect(notices).toEqual([
      expect.objectContaining({ kind: 'CONSENT_NOTICE', senderId: null, phone: '01081000001', content: noticeText(dueAt), status: 'PENDING' }),
    ])
    // Claimed for this confirmation: neither instance queues it again, nor the not yet due one, nor the lapsed one.
    const again = await Promise.all([first.current.advertising.sendConsentNotices(), second.current.advertising.sendConsentNotices()])
    expect(again.map((round) => round.queued)).toEqual([0, 0])
    expect(await noticesOf(tenant.id)).toHaveLength(1)

    // A system message: counted once in the quota and in the usage report as consentNotices, never in the history.
    const quota = await sql<{ recipients: number }>`select coalesce(sum(recipients), 0)::int as recipients from sms_daily_usage where tenant_id = ${tenant.id}`.execute(iso.owner)
    expect(quota.rows[0]!.recipients).toBe(1)
    const history = await first.current.inject({ method: 'GET', url: '/v1/sms/history', headers })
    expect(history.json()).toMatchObject({ total: 0, items: [] })
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul' }).format(new Date())
    const usage = await first.current.inject({ method: 'GET', url: `/v1/sms/usage?from=${today}&to=${today}`, headers })
    expect(usage.json().totals).toMatchObject({ messages: 1, recipients: 1, consentNotices: 1 })

    // Handed to the provider: the consent is confirmed at that moment and lives another two years.
    await first.current.dispatcher.runOnce()
    const [handed] = await noticesOf(tenant.id)
    expect(handed!.dispatchedAt).not.toBeNull()
    const settled = await first.current.advertising.sendConsentNotices()
    expect(settled).toMatchObject({ renewed: 1, queued: 0 })
    const [renewed, waiting, lapsed] = await consentsOf(tenant.id)
    expect(renewed).toMatchObject({ phone: '01081000001', consentedAt: dueAt, confirmedAt: handed!.dispatchedAt, noticeSmsId: null, noticeFor: dueAt })
    expect(waiting).toMatchObject({ noticeSmsId: null, noticeFor: null })
    expect(lapsed).toMatchObject({ noticeSmsId: null, noticeFor: null })

    // The next period's notice falls due 700 days after the renewal, once; the consent never renewed has lapsed by then.
    now = new Date(handed!.dispatchedAt!.getTime() + 700 * DAY_MS)
    const next = await Promise.all([first.current.advertising.sendConsentNotices(), second.current.advertising.sendConsentNotices()])
    expect(next.map((round) => round.queued).sort()).toEqual([0, 1])
    expect((await noticesOf(tenant.id)).map((notice) => notice.phone)).toEqual(['01081000001', '01081000001'])
  })

  it('lets the consent lapse at 730 days when its notice could not go out, and sends it no second notice', async () => {
    now = new Date()
    const { tenant } = await academyWithConsents()
    const consentedAt = new Date(now.getTime() - 700 * DAY_MS - 60_000)
    await recordConsents(tenant, ['010-8200-0001'], { at: consentedAt, db: iso.owner })
    expect((await first.current.advertising.sendConsentNotices()).queued).toBe(1)
    // The provider refused it for good (as a final failure of the dispatcher leaves it).
    await iso.owner.updateTable('smsMessages').set({ status: 'FAILED' }).where('tenantId', '=', tenant.id).execute()
    expect(await first.current.advertising.sendConsentNotices()).toMatchObject({ renewed: 0, failed: 1, queued: 0 })
    expect(await consentsOf(tenant.id)).toEqual([
      { phone: '01082000001', consentedAt, confirmedAt: consentedAt, noticeSmsId: null, noticeFor: consentedAt },
    ])
    expect(await noticesOf(tenant.id)).toHaveLength(1)

    const liveAt = async (at: Date) =>
      withTenant(first.current.db, tenant.id, (trx) => refusalsAmong(trx, tenant.id, ['01082000001'], new Date(at.getTime() - 730 * DAY_MS)))
    expect((await liveAt(new Date(consentedAt.getTime() + 730 * DAY_MS - 1000))).noConsent.size).toBe(0)
    expect([...(await liveAt(new Date(consentedAt.getTime() + 730 * DAY_MS))).noConsent]).toEqual(['01082000001'])
  })

  it('sends no notice for an academy without a free 080 number: it could not say how to refuse', async () => {
    now = new Date()
    const { tenant } = await academyWithConsents(null)
    await recordConsents(tenant, ['010-8300-0001'], { at: new Date(now.getTime() - 705 * DAY_MS), db: iso.owner })
    expect((await first.current.advertising.sendConsentNotices()).queued).toBe(0)
    expect(await noticesOf(tenant.id)).toEqual([])
  })
})
