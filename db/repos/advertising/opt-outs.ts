import { sql } from 'kysely'
import type { OptOutSource } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export interface OptOutRecord {
  phone: string
  createdAt: Date
  source: OptOutSource
}

/** A page of the tenant's opt-out list, newest first (index sms_opt_outs_recent), and the list's length. */
export async function listOptOuts(
  trx: TenantTx,
  tenantId: number,
  page: { offset: number; limit: number },
): Promise<{ items: OptOutRecord[]; total: number }> {
  const items = await trx
    .selectFrom('smsOptOuts')
    .select(['phone', 'createdAt', 'source'])
    .where('tenantId', '=', tenantId)
    .orderBy('createdAt', 'desc')
    .orderBy('phone', 'desc')
    .offset(page.offset)
    .limit(page.limit)
    .execute()
  const { total } = await trx
    .selectFrom('smsOptOuts')
    .select(sql<number>`count(*)::int8`.as('total'))
    .where('tenantId', '=', tenantId)
    .executeTakeFirstOrThrow()
  return { items, total: Number(total) }
}

/** Lists a number; `created` is false when it was listed already (the row is answered as it stands). */
export async function addOptOut(
  trx: TenantTx,
  tenantId: number,
  phone: string,
  userId: number,
): Promise<{ record: OptOutRecord; created: boolean }> {
  const inserted = await trx
    .insertInto('smsOptOuts')
    .values({ tenantId, phone, createdBy: userId, source: 'STAFF' })
    .onConflict((oc) => oc.columns(['tenantId', 'phone']).doNothing())
    .returning(['phone', 'createdAt', 'source'])
    .executeTakeFirst()
  if (inserted) return { record: inserted, created: true }
  const existing = await trx
    .selectFrom('smsOptOuts')
    .select(['phone', 'createdAt', 'source'])
    .where('tenantId', '=', tenantId)
    .where('phone', '=', phone)
    .executeTakeFirstOrThrow()
  return { record: existing, created: false }
}

/** Takes a number off the list; false when it was not on it. */
export async function removeOptOut(trx: TenantTx, tenantId: number, phone: string): Promise<boolean> {
  const result = await trx.deleteFrom('smsOptOuts').where('tenantId', '=', tenantId).where('phone', '=', phone).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/**
 * Which of `phones` (stored digits) are on the tenant's list: one statement probing the primary key once per
 * distinct number, so a 10,000-recipient send costs the same against a list of 50 or of 50,000 numbers.
 */
export async function listedAmong(trx: TenantTx, tenantId: number, phones: readonly string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set()
  const { rows } = await sql<{ phone: string }>`
    select o.phone from sms_opt_outs o
    where o.tenant_id = ${tenantId} and o.phone = any(${[...new Set(phones)]}::varchar[])`.execute(trx)
  return new Set(rows.map((row) => row.phone))
}

/**
 * Lists the numbers refused at the provider's 080 number (source PROVIDER_080) in one statement; a number listed
 * already (by staff, or by an earlier reading) keeps its row. Returns the numbers this call added.
 */
export async function addProviderRefusals(trx: TenantTx, tenantId: number, phones: readonly string[]): Promise<string[]> {
  if (phones.length === 0) return []
  const { rows } = await sql<{ phone: string }>`
    insert into sms_opt_outs (tenant_id, phone, created_by, source)
    select ${tenantId}, p.phone, null, 'PROVIDER_080' from unnest(${[...new Set(phones)]}::varchar[]) as p (phone)
    on conflict (tenant_id, phone) do nothing
    returning phone`.execute(trx)
  return rows.map((row) => row.phone)
}
