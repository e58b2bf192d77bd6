import { sql } from 'kysely'
import type { TenantTx } from '../../tenant-transaction.js'

/** The tenant's opt-out number (digits), or null when it has none. */
export async function findOptOutNumber(trx: TenantTx): Promise<string | null> {
  const row = await trx.selectFrom('smsAdvertisingSettings').select('optOutNumber').executeTakeFirst()
  return row?.optOutNumber ?? null
}

/**
 * Sets the tenant's opt-out number (null removes it). True when it changed: the same number again writes nothing,
 * so it records no audit event.
 */
export async function saveOptOutNumber(trx: TenantTx, tenantId: number, optOutNumber: string | null, userId: number): Promise<boolean> {
  const saved = await sql<{ tenantId: number }>`
    insert into sms_advertising_settings as s (tenant_id, opt_out_number, updated_by, updated_at)
    values (${tenantId}, ${optOutNumber}, ${userId}, now())
    on conflict (tenant_id) do update
      set opt_out_number = excluded.opt_out_number, updated_by = excluded.updated_by, updated_at = now()
      where s.opt_out_number is distinct from excluded.opt_out_number
    returning s.tenant_id`.execute(trx)
  return saved.rows.length > 0
}

/** What an advertisement is framed with: the tenant's name and its opt-out number (null when it has none). */
export async function findAdvertiser(trx: TenantTx, tenantId: number): Promise<{ name: string; optOutNumber: string | null }> {
  return trx
    .selectFrom('tenants as t')
    .leftJoin('smsAdvertisingSettings as s', 's.tenantId', 't.id')
    .select(['t.name', 's.optOutNumber'])
    .where('t.id', '=', tenantId)
    .executeTakeFirstOrThrow()
}
