/**
 * POST /v1/sms/send with 10,000 recipients as an ADVERTISEMENT against a 50,000-number opt-out list (1,000 of the
 * recipients on it), measured in turns with the same send as a plain INFORMATIONAL message on the same instance:
 * what the advertising rules (the frame's sizing, one set-based lookup of every number in the list's primary key,
 * OPTED_OUT rows) add to acceptance. API only (SVC_SMS_DISPATCHER=off), no daily quota, so nothing but the request
 * path is measured. Both sends are scheduled for the next 10:00 in SVC_TIME_ZONE, so the quiet hours never refuse
 * the advertisement whatever time the bench runs. Target: median < 1 s per advertisement. The academy does not
 * require consent here (consentRequired false): the figure of advertising without consents, beside which
 * ad-consent.ts measures the same send against 50,000 consents.
 */
import { sql } from 'kysely'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { bodyFile, measureAlternating } from '../lib/load.js'
import { checkRun, heading, measuredRow } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { withSeededService } from '../lib/service-scenario.js'
import { oneAtATime, RECIPIENTS } from './send-10k.js'

export const OPT_OUT_LIST = 50_000
/** Recipients of the advertisement whose number is on the list (every tenth). */
const LISTED_RECIPIENTS = RECIPIENTS / 10

export const recipientPhone = (i: number) => `010${10_000_000 + i}`

/** Tomorrow 10:00 in Asia/Seoul (UTC+9, no daylight saving): inside the advertising hours. */
export function tomorrowMorning(): string {
  const day = new Date(Date.now() + 9 * 3600_000 + 24 * 3600_000)
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 10 - 9)).toISOString()
}

export function sendBody(purpose: 'INFORMATIONAL' | 'ADVERTISEMENT'): string {
  return JSON.stringify({
    title: 'Bench',
    content: '{name} 학부모님, 겨울방학 특강 안내입니다.',
    purpose,
    scheduledAt: tomorrowMorning(),
    recipients: Array.from({ length: RECIPIENTS }, (_, i) => {
      const digits = recipientPhone(i).slice(3)
      return { phone: `010-${digits.slice(0, 4)}-${digits.slice(4)}`, name: `Student ${i}`, recipientRole: 'GUARDIAN' }
    }),
  })
}

export async function advertisement(ctx: BenchContext): Promise<void> {
  heading('POST /v1/sms/send, 10,000-recipient advertisement against a 50,000-number opt-out list')
  const database = await ctx.database()
  const options = {
    databaseUrl: database.url,
    owner: database.owner,
    name: 'service-advertisement',
    env: { SVC_SMS_DISPATCHER: 'off', SVC_SMS_TENANT_DAILY_RECIPIENTS: '0', SVC_TIME_ZONE: 'Asia/Seoul' },
    staff: 1,
  }
  await withSeededService(ctx, options, async (service, tenant) => {
    // The list: every tenth recipient of the send, the rest numbers no send of this bench uses.
    await sql`
      insert into sms_opt_outs (tenant_id, phone, created_at)
      select ${tenant.tenantId}, case when g <= ${LISTED_RECIPIENTS} then '010' || (10000000 + (g - 1) * 10)
                                      else '011' || (20000000 + g) end,
             now() - make_interval(secs => g)
      from generate_series(1, ${OPT_OUT_LIST}) g`.execute(database.owner)
    await sql`
      insert into sms_advertising_settings (tenant_id, opt_out_number, consent_required)
      values (${tenant.tenantId}, '0801234567', false)`.execute(database.owner)
    await sql`analyze sms_opt_outs`.execute(database.owner)
    const [session] = await loginStaff(service.url, tenant, 1)
    const load = async (purpose: 'INFORMATIONAL' | 'ADVERTISEMENT') => {
      const body = await bodyFile(sendBody(purpose))
      return () => oneAtATime(service.url, session!.access, body)
    }
    const watch = { service: service.pid }
    const [plain, advertised] = await measureAlternating([
      { label: 'send 10k INFORMATIONAL', watch, spec: await load('INFORMATIONAL') },
      { label: 'send 10k ADVERTISEMENT, 50k opt-outs', watch, spec: await load('ADVERTISEMENT') },
    ])
    checkRun(ctx, 'advertisement plain', service, plain)
    checkRun(ctx, 'advertisement', service, advertised)
    const { rows } = await sql<{ optedOut: number }>`
      select coalesce(max(opted_out_count), 0)::int as "optedOut" from sms_messages where purpose = 'ADVERTISEMENT'`.execute(database.owner)
    ctx.addRow({
      ...measuredRow('POST /v1/sms/send, 10,000-recipient advertisement, 50,000-number opt-out list (1 connection)', advertised!),
      target: 'median < 1,000 ms',
      met: advertised!.p50 < 1000 && advertised!.failures === 0 && rows[0]!.optedOut === LISTED_RECIPIENTS,
      notes: `${rows[0]!.optedOut.toLocaleString('en')} recipients OPTED_OUT per send (expected ${LISTED_RECIPIENTS.toLocaleString('en')}); ${advertised!.cpu}`,
    })
    ctx.addRow({
      ...measuredRow('POST /v1/sms/send, the same 10,000 recipients INFORMATIONAL, same instance, in turns', plain!),
      target: '(context)',
      met: null,
      notes: `advertisement p50 ${(advertised!.p50 / plain!.p50).toFixed(2)} x this one's; ${plain!.cpu}`,
    })
  })
}

if (isMain(import.meta.url)) await runStandalone(advertisement)
