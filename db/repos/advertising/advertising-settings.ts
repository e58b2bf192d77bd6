import { sql } from 'kysely'
import type { TenantTx } from '../../tenant-transaction.js'

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

/** The advertising settings as the API answers them; a tenant without a row has no number and requires consent. */
export async function findAdvertisingSettings(trx: TenantTx): Promise<{ optOutNumber: string | null; consentRequired: boolean }> {
  const row = await trx.selectFrom('smsAdvertisingSettings').select(['optOutNumber', 'consentRequired']).executeTakeFirst()
  return { optOutNumber: row?.optOutNumber ?? null, consentRequired: row?.consentRequired ?? true }
}

/** Sets whether advertisements need a live consent. True when it changed (the same value again writes nothing). */
export async function saveConsentRequired(trx: TenantTx, tenantId: number, consentRequired: boolean, userId: number): Promise<boolean> {
  const saved = await sql<{ inserted: boolean }>`
    insert into sms_advertising_settings as s (tenant_id, consent_required, updated_by, updated_at)
    values (${tenantId}, ${consentRequired}, ${userId}, now())
    on conflict (tenant_id) do update
      set consent_required = excluded.consent_required, updated_by = excluded.updated_by, updated_at = now()
      where s.consent_required is distinct from excluded.consent_required
    returning (xmax = 0) as inserted`.execute(trx)
  const row = saved.rows[0]
  // A first row that states the default (true) changed nothing a reader could see.
  return row !== undefined && !(row.inserted && consentRequired)
}

/**
 * What an advertisement is framed with: the tenant's name and its opt-out number (null when it has none), and
 * whether its recipients need a live consent (true without a settings row).
 */
export async function findAdvertiser(
  trx: TenantTx,
  tenantId: number,
): Promise<{ name: string; optOutNumber: string | null; consentRequired: boolean }> {
  const row = await trx
    .selectFrom('tenants as t')
    .leftJoin('smsAdvertisingSettings as s', 's.tenantId', 't.id')
    .select(['t.name', 's.optOutNumber', 's.consentRequired'])
    .where('t.id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return { name: row.name, optOutNumber: row.optOutNumber, consentRequired: row.consentRequired ?? true }
}

/** Whether the tenant's advertisements need a live consent, read afresh at every hand-over. */
export async function consentRequired(trx: TenantTx): Promise<boolean> {
  const row = await trx.selectFrom('smsAdvertisingSettings').select('consentRequired').executeTakeFirst()
  return row?.consentRequired ?? true
}
