/**
 * POST /v1/sms/send with 10,000 recipients as an ADVERTISEMENT while the academy requires consent (the default),
 * against 50,000 consents and a 50,000-number opt-out list: 1,000 of the recipients listed (OPTED_OUT), 1,000 without
 * a consent (NO_CONSENT), 8,000 consenting; in turns with the same send INFORMATIONAL on the same instance. What the
 * consent rule adds is the second probe of the one set-based statement that reads both lists
 * (db/repos/advertising/ad-consents.ts). API only (SVC_SMS_DISPATCHER=off), no daily quota; scheduled for the next
 * 10:00 in Asia/Seoul, so the quiet hours never refuse it. Target: median < 1 s per advertisement, beside the
 * figure of advertisement.ts (the same send without the consent rule).
 */
import { sql } from 'kysely'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { bodyFile, measureAlternating } from '../lib/load.js'
import { checkRun, heading, measuredRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { withSeededService } from '../lib/service-scenario.js'
import { OPT_OUT_LIST, sendBody } from './advertisement.js'
import { oneAtATime, RECIPIENTS } from './send-10k.js'

const CONSENTS = 50_000
/** Every tenth recipient (i % 10 == 0) is listed, every tenth from the fifth (i % 10 == 5) has no consent. */
const LISTED_RECIPIENTS = RECIPIENTS / 10
const UNCONSENTED_RECIPIENTS = RECIPIENTS / 10

export async function adConsent(ctx: BenchContext): Promise<void> {
  heading('POST /v1/sms/send, 10,000-recipient advertisement against 50,000 consents and 50,000 refusals')
  const database = await ctx.database()
  const options = {
    databaseUrl: database.url,
    owner: database.owner,
    name: 'service-ad-consent',
    env: { SVC_SMS_DISPATCHER: 'off', SVC_SMS_TENANT_DAILY_RECIPIENTS: '0', SVC_TIME_ZONE: 'Asia/Seoul' },
    staff: 1,
  }
  await withSeededService(ctx, options, async (service, tenant) => {
    // Recipient i is '010' || (10000000 + i). The list: recipients i % 10 == 0, then numbers no send uses.
    await sql`
      insert into sms_opt_outs (tenant_id, phone, created_at)
      select ${tenant.tenantId}, case when g <= ${LISTED_RECIPIENTS} then '010' || (10000000 + (g - 1) * 10)
                                      else '011' || (20000000 + g) end,
             now() - make_interval(secs => g)
      from generate_series(1, ${OPT_OUT_LIST}) g`.execute(database.owner)
    // The consents: every recipient but i % 10 == 5 (the listed ones too: a listed number stays OPTED_OUT), then
    // numbers no send uses, up to 50,000.
    await sql`
      insert into sms_ad_consents (tenant_id, phone, source, evidence, consented_at, confirmed_at)
      select ${tenant.tenantId}, phone, 'WRITTEN', 'bench', now() - interval '30 days', now() - interval '30 days'
      from (
        select '010' || (10000000 + i) as phone from generate_series(0, ${RECIPIENTS - 1}) i where i % 10 <> 5
        union all
        select '012' || (30000000 + g) from generate_series(1, ${CONSENTS - RECIPIENTS + UNCONSENTED_RECIPIENTS}) g
      ) numbers`.execute(database.owner)
    await sql`insert into sms_advertising_settings (tenant_id, opt_out_number) values (${tenant.tenantId}, '0801234567')`.execute(database.owner)
    await sql`analyze sms_opt_outs`.execute(database.owner)
    await sql`analyze sms_ad_consents`.execute(database.owner)
    const [session] = await loginStaff(service.url, tenant, 1)
    const load = async (purpose: 'INFORMATIONAL' | 'ADVERTISEMENT') => {
      const body = await bodyFile(sendBody(purpose))
      return () => oneAtATime(service.url, session!.access, body)
    }
    const watch = { service: service.pid }
    const [plain, advertised] = await measureAlternating([
      { label: 'send 10k INFORMATIONAL', watch, spec: await load('INFORMATIONAL') },
      { label: 'send 10k ADVERTISEMENT, 50k consents, 50k opt-outs', watch, spec: await load('ADVERTISEMENT') },
    ])
    checkRun(ctx, 'ad-consent plain', service, plain)
    checkRun(ctx, 'ad-consent', service, advertised)
    const { rows } = await sql<{ optedOut: number; noConsent: number; consents: number }>`
      select coalesce(max(opted_out_count), 0)::int as "optedOut", coalesce(max(no_consent_count), 0)::int as "noConsent",
             (select count(*)::int from sms_ad_consents) as consents
      from sms_messages where purpose = 'ADVERTISEMENT'`.execute(database.owner)
    const counted = rows[0]!
    ctx.addRow({
      ...measuredRow('POST /v1/sms/send, 10,000-recipient advertisement, 50,000 consents and 50,000 opt-outs (1 connection)', advertised!),
      target: 'median < 1,000 ms',
      met:
        advertised!.p50 < 1000 &&
        advertised!.failures === 0 &&
        counted.optedOut === LISTED_RECIPIENTS &&
        counted.noConsent === UNCONSENTED_RECIPIENTS &&
        counted.consents === CONSENTS,
      notes: `${counted.optedOut.toLocaleString('en')} OPTED_OUT and ${counted.noConsent.toLocaleString('en')} NO_CONSENT per send (expected ${LISTED_RECIPIENTS.toLocaleString('en')} each), ${counted.consents.toLocaleString('en')} consents; ${advertised!.cpu}`,
    })
    ctx.addRow({
      ...measuredRow('POST /v1/sms/send, the same 10,000 recipients INFORMATIONAL, same instance, in turns', plain!),
      target: '(context)',
      met: null,
      notes: `advertisement p50 ${(advertised!.p50 / plain!.p50).toFixed(2)} x this one's; ${plain!.cpu}`,
    })
  })
}

if (isMain(import.meta.url)) await runStandalone(adConsent)
