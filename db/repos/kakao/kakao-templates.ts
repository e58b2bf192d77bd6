import { sql, type Selectable } from 'kysely'
import type { KakaoTemplatesTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export type KakaoTemplateRecord = Omit<Selectable<KakaoTemplatesTable>, 'tenantId' | 'createdAt'>

/** What the provider says of a template, as stored. */
export type KakaoTemplateCopy = Pick<KakaoTemplateRecord, 'providerTemplateId' | 'name' | 'content' | 'variables' | 'buttons' | 'status' | 'pfId'>

const COLUMNS = ['id', 'providerTemplateId', 'name', 'content', 'variables', 'buttons', 'status', 'pfId', 'refreshedAt'] as const

/** The tenant's templates, newest import first. */
export function listKakaoTemplates(trx: TenantTx): Promise<KakaoTemplateRecord[]> {
  return trx.selectFrom('kakaoTemplates').select(COLUMNS).orderBy('createdAt', 'desc').orderBy('id', 'desc').execute()
}

export function findKakaoTemplate(trx: TenantTx, id: number): Promise<KakaoTemplateRecord | undefined> {
  return trx.selectFrom('kakaoTemplates').select(COLUMNS).where('id', '=', id).executeTakeFirst()
}

/**
 * Stores the provider's copy of a template: a new row, or the tenant's row of the same provider template refreshed
 * (`created` tells which).
 */
export async function saveKakaoTemplate(
  trx: TenantTx,
  tenantId: number,
  copy: KakaoTemplateCopy,
): Promise<{ record: KakaoTemplateRecord; created: boolean }> {
  const { rows } = await sql<KakaoTemplateRecord & { created: boolean }>`
    insert into kakao_templates as t (tenant_id, provider_template_id, name, content, variables, buttons, status, pf_id)
    values (${tenantId}, ${copy.providerTemplateId}, ${copy.name}, ${copy.content}, ${copy.variables}::text[],
            ${JSON.stringify(copy.buttons)}::jsonb, ${copy.status}, ${copy.pfId})
    on conflict (tenant_id, provider_template_id) do update
      set name = excluded.name, content = excluded.content, variables = excluded.variables,
          buttons = excluded.buttons, status = excluded.status, pf_id = excluded.pf_id, refreshed_at = now()
    returning t.id, t.provider_template_id, t.name, t.content, t.variables, t.buttons, t.status, t.pf_id, t.refreshed_at,
              (xmax = 0) as created`.execute(trx)
  const { created, ...record } = rows[0]!
  return { record, created }
}

/** Replaces a stored template's copy; undefined when the row is gone. */
export function refreshKakaoTemplate(trx: TenantTx, id: number, copy: KakaoTemplateCopy): Promise<KakaoTemplateRecord | undefined> {
  return trx
    .updateTable('kakaoTemplates')
    .set({
      name: copy.name,
      content: copy.content,
      variables: sql<string[]>`${copy.variables}::text[]`,
      buttons: JSON.stringify(copy.buttons),
      status: copy.status,
      pfId: copy.pfId,
      refreshedAt: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('providerTemplateId', '=', copy.providerTemplateId)
    .returning(COLUMNS)
    .executeTakeFirst()
}

export async function deleteKakaoTemplate(trx: TenantTx, id: number): Promise<Pick<KakaoTemplateRecord, 'id' | 'providerTemplateId' | 'name'> | undefined> {
  return trx.deleteFrom('kakaoTemplates').where('id', '=', id).returning(['id', 'providerTemplateId', 'name']).executeTakeFirst()
}
