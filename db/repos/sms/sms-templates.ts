import { sql, type Selectable, type Updateable } from 'kysely'
import type { SmsTemplatesTable, TemplateCategory } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

const COLUMNS = ['id', 'name', 'content', 'category', 'version', 'createdBy', 'createdAt', 'updatedAt'] as const

export type TemplateRecord = Pick<Selectable<SmsTemplatesTable>, (typeof COLUMNS)[number]>

export type TemplateChanges = Pick<Updateable<SmsTemplatesTable>, 'name' | 'content' | 'category'>

/** Who is editing: `anyTemplate` for roles that may edit every template, else only `userId`'s own. */
export interface TemplateEditor {
  userId: number
  anyTemplate: boolean
}

export function insertTemplate(
  trx: TenantTx,
  values: Pick<Selectable<SmsTemplatesTable>, 'tenantId' | 'createdBy' | 'name' | 'content' | 'category'>,
): Promise<TemplateRecord> {
  return trx.insertInto('smsTemplates').values(values).returning(COLUMNS).executeTakeFirstOrThrow()
}

/** Newest first; the id breaks ties so pages never overlap or skip rows (index sms_templates_recent). */
export function listTemplates(
  trx: TenantTx,
  page: { offset: number; limit: number; category?: TemplateCategory },
): Promise<TemplateRecord[]> {
  return trx
    .selectFrom('smsTemplates')
    .select(COLUMNS)
    .$if(page.category !== undefined, (query) => query.where('category', '=', page.category!))
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .offset(page.offset)
    .limit(page.limit)
    .execute()
}

export async function countTemplates(trx: TenantTx, category?: TemplateCategory): Promise<number> {
  const row = await trx
    .selectFrom('smsTemplates')
    .select((eb) => eb.fn.countAll<string>().as('total'))
    .$if(category !== undefined, (query) => query.where('category', '=', category!))
    .executeTakeFirstOrThrow()
  return Number(row.total)
}

/** The fields that decide why a guarded write touched no row: gone, not the editor's, or a stale version. */
export function findTemplateGuard(
  trx: TenantTx,
  id: number,
): Promise<Pick<TemplateRecord, 'createdBy' | 'version'> | undefined> {
  return trx.selectFrom('smsTemplates').select(['createdBy', 'version']).where('id', '=', id).executeTakeFirst()
}

/**
 * Optimistic lock and permission in one statement: the row changes only if it still has `version` and the
 * editor may touch it, so no concurrent edit can slip between a check and the write.
 */
export function updateTemplate(
  trx: TenantTx,
  id: number,
  version: number,
  changes: TemplateChanges,
  editor: TemplateEditor,
): Promise<TemplateRecord | undefined> {
  return trx
    .updateTable('smsTemplates')
    .set({ ...changes, version: sql<number>`version + 1`, updatedAt: sql<Date>`now()` })
    .where('id', '=', id)
    .where('version', '=', version)
    .$if(!editor.anyTemplate, (query) => query.where('createdBy', '=', editor.userId))
    .returning(COLUMNS)
    .executeTakeFirst()
}

/** The deleted template's id and name (what the audit log keeps of it); undefined when nothing was deleted. */
export function deleteTemplate(
  trx: TenantTx,
  id: number,
  editor: TemplateEditor,
): Promise<Pick<TemplateRecord, 'id' | 'name'> | undefined> {
  return trx
    .deleteFrom('smsTemplates')
    .where('id', '=', id)
    .$if(!editor.anyTemplate, (query) => query.where('createdBy', '=', editor.userId))
    .returning(['id', 'name'])
    .executeTakeFirst()
}
