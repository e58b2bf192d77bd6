import { sql, type Kysely } from 'kysely'
import type { AdConsentSource, DB } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export interface AdConsentRecord {
  phone: string
  source: AdConsentSource
  evidence: string
  consentedAt: Date
  confirmedAt: Date
  createdBy: number | null
}

const COLUMNS = ['phone', 'source', 'evidence', 'consentedAt', 'confirmedAt', 'createdBy'] as const

/** A page of the tenant's consents, newest first (index sms_ad_consents_recent), optionally of one number, and their count. */
export async function listAdConsents(
  trx: TenantTx,
  tenantId: number,
  page: { offset: number; limit: number; phone?: string | undefined },
): Promise<{ items: AdConsentRecord[]; total: number }> {
  let items = trx.selectFrom('smsAdConsents').select(COLUMNS).where('tenantId', '=', tenantId)
  let count = trx.selectFrom('smsAdConsents').select(sql<number>`count(*)::int8`.as('total')).where('tenantId', '=', tenantId)
  if (page.phone !== undefined) {
    items = items.where('phone', '=', page.phone)
    count = count.where('phone', '=', page.phone)
  }
  const rows = await items.orderBy('consentedAt', 'desc').orderBy('phone', 'desc').offset(page.offset).limit(page.limit).execute()
  const { total } = await count.executeTakeFirstOrThrow()
  return { items: rows, total: Number(total) }
}

export interface ConsentInput {
  phone: string
  source: AdConsentSource
  evidence: string
  userId: number
  /** The service's clock: the consent's time, and its confirmation. */
  at: Date
}

/**
 * Records a consent in one statement; `created` is false when the number had one already: its source and evidence
 * are replaced and it counts as confirmed again at `at`, its first consent time kept. A notice awaiting its hand-over
 * no longer renews it (the new confirmation is later).
 */
export async function recordAdConsent(
  trx: TenantTx,
  tenantId: number,
  input: ConsentInput,
): Promise<{ record: AdConsentRecord; created: boolean }> {
  const { rows } = await sql<AdConsentRecord & { created: boolean }>`
    insert into sms_ad_consents as c (tenant_id, phone, source, evidence, consented_at, confirmed_at, created_by, updated_at)
    values (${tenantId}, ${input.phone}, ${input.source}, ${input.evidence}, ${input.at}, ${input.at}, ${input.userId}, now())
    on conflict (tenant_id, phone) do update
      set source = excluded.source, evidence = excluded.evidence, confirmed_at = excluded.confirmed_at,
          notice_sms_id = null, updated_at = now()
    returning c.phone, c.source, c.evidence, c.consented_at as "consentedAt", c.confirmed_at as "confirmedAt",
      c.created_by as "createdBy", (xmax = 0) as created`.execute(trx)
  const { created, ...record } = rows[0]!
  return { record, created }
}

/** Withdraws a number's consent; false when it had none. */
export async function withdrawAdConsent(trx: TenantTx, tenantId: number, phone: string): Promise<boolean> {
  const result = await trx.deleteFrom('smsAdConsents').where('tenantId', '=', tenantId).where('phone', '=', phone).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** Whether the number is on the tenant's opt-out list (a consent is refused for it). */
export async function isOptedOut(trx: TenantTx, tenantId: number, phone: string): Promise<boolean> {
  const row = await trx.selectFrom('smsOptOuts').select('phone').where('tenantId', '=', tenantId).where('phone', '=', phone).executeTakeFirst()
  return row !== undefined
}

/** Which numbers an advertisement leaves out, and why. */
export interface Refusals {
  optedOut: Set<string>
  noConsent: Set<string>
}

/**
 * Which of `phones` (stored digits) an advertisement may not reach: those on the opt-out list, and (when
 * `liveAfter` is given: consent is required) those without a consent confirmed after `liveAfter`. One statement
 * probing both primary keys once per distinct number, answering only the numbers left out, so a 10,000-recipient
 * send costs the same against lists of 50 or of 50,000 numbers. A listed number is OPTED_OUT whatever its consent.
 */
export async function refusalsAmong(trx: TenantTx, tenantId: number, phones: readonly string[], liveAfter: Date | null): Promise<Refusals> {
  const refusals: Refusals = { optedOut: new Set(), noConsent: new Set() }
  if (phones.length === 0) return refusals
  const distinct = [...new Set(phones)]
  if (liveAfter === null) {
    const { rows } = await sql<{ phone: string }>`
      select o.phone from sms_opt_outs o
      where o.tenant_id = ${tenantId} and o.phone = any(${distinct}::varchar[])`.execute(trx)
    for (const row of rows) refusals.optedOut.add(row.phone)
    return refusals
  }
  const { rows } = await sql<{ phone: string; optedOut: boolean }>`
    select p.phone, o.phone is not null as "optedOut"
    from unnest(${distinct}::varchar[]) as p (phone)
    left join sms_opt_outs o on o.tenant_id = ${tenantId} and o.phone = p.phone
    where o.phone is not null
       or not exists (select 1 from sms_ad_consents c
                      where c.tenant_id = ${tenantId} and c.phone = p.phone and c.confirmed_at > ${liveAfter})`.execute(trx)
  for (const row of rows) (row.optedOut ? refusals.optedOut : refusals.noConsent).add(row.phone)
  return refusals
}

/** A consent whose notice is due, as the notice job claims it. */
export interface DueConsent {
  phone: string
  consentedAt: Date
  confirmedAt: Date
}

/**
 * Claims up to `limit` consents due for their notice (confirmed at or before `dueBefore`, still live after
 * `liveAfter`, no notice queued for that confirmation): locked FOR UPDATE SKIP LOCKED, so an instance running the
 * job at the same moment skips them, and once the claiming transaction commits they no longer match.
 */
export async function claimDueConsents(
  trx: TenantTx,
  tenantId: number,
  window: { dueBefore: Date; liveAfter: Date; limit: number },
): Promise<DueConsent[]> {
  const { rows } = await sql<DueConsent>`
    select phone, consented_at as "consentedAt", confirmed_at as "confirmedAt" from sms_ad_consents
    where tenant_id = ${tenantId} and confirmed_at <= ${window.dueBefore} and confirmed_at > ${window.liveAfter}
      and notice_for is distinct from confirmed_at and notice_sms_id is null
    order by confirmed_at, phone
    limit ${window.limit}
    for update skip locked`.execute(trx)
  return rows
}

/** Records the notices queued for claimed consents (same order): no other notice for these confirmations. */
export async function markNoticesQueued(trx: TenantTx, tenantId: number, phones: readonly string[], smsIds: readonly number[]): Promise<void> {
  await sql`
    update sms_ad_consents c set notice_sms_id = q.sms_id, notice_for = c.confirmed_at, updated_at = now()
    from unnest(${phones}::varchar[], ${smsIds}::bigint[]) as q (phone, sms_id)
    where c.tenant_id = ${tenantId} and c.phone = q.phone`.execute(trx)
}

/**
 * Settles queued notices whose fate is known: one the provider took (DISPATCHED, SENT, PARTIAL) confirms its
 * consent again at the time it was handed over; one that failed, was cancelled or is gone confirms nothing, and the
 * consent lapses at the end of its life. Returns how many were renewed and how many ended without renewal.
 */
export async function settleNotices(trx: TenantTx, tenantId: number): Promise<{ renewed: number; failed: number }> {
  const { rows } = await sql<{ renewed: boolean }>`
    with queued as (
      select c.phone, m.status, m.dispatched_at, (m.id is null) as gone
      from sms_ad_consents c
      left join sms_messages m on m.tenant_id = c.tenant_id and m.id = c.notice_sms_id
      where c.tenant_id = ${tenantId} and c.notice_sms_id is not null
    ), known as (
      select phone, status in ('DISPATCHED', 'SENT', 'PARTIAL') as renewed, dispatched_at from queued
      where gone or status in ('DISPATCHED', 'SENT', 'PARTIAL', 'FAILED', 'CANCELLED')
    )
    update sms_ad_consents c
      set confirmed_at = case when k.renewed then k.dispatched_at else c.confirmed_at end,
          notice_sms_id = null, updated_at = now()
    from known k
    where c.tenant_id = ${tenantId} and c.phone = k.phone
    returning k.renewed`.execute(trx)
  const renewed = rows.filter((row) => row.renewed).length
  return { renewed, failed: rows.length - renewed }
}

/** Tenants with consents due for a notice, or with notices to settle (db/functions/svc_ad_consent_notice_tenants.sql). */
export async function tenantsWithNotices(db: Kysely<DB>, dueBefore: Date, liveAfter: Date, limit: number): Promise<number[]> {
  const { rows } = await sql<{ tenantId: string | number }>`
    select t as "tenantId" from svc_ad_consent_notice_tenants(${dueBefore}::timestamptz, ${liveAfter}::timestamptz, ${limit}::int) as t`.execute(db)
  return rows.map((row) => Number(row.tenantId))
}
