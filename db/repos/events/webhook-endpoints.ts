import { sql, type Selectable } from 'kysely'
import type { WebhookEndpointsTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export type WebhookEndpointRecord = Pick<Selectable<WebhookEndpointsTable>, 'url' | 'events' | 'createdAt' | 'updatedAt'>

const COLUMNS = ['url', 'events', 'createdAt', 'updatedAt'] as const

export function findWebhookEndpoint(trx: TenantTx): Promise<WebhookEndpointRecord | undefined> {
  return trx.selectFrom('webhookEndpoints').select(COLUMNS).executeTakeFirst()
}

/**
 * Creates the tenant's endpoint with `secretSealed`, or changes an existing one's URL and events and keeps its
 * secret (`secretSealed` unused). `created` tells which: only a new endpoint's secret is ever shown.
 */
export async function saveWebhookEndpoint(
  trx: TenantTx,
  tenantId: number,
  endpoint: { url: string; events: string[] },
  secretSealed: string,
): Promise<{ record: WebhookEndpointRecord; created: boolean }> {
  const { rows } = await sql<WebhookEndpointRecord & { created: boolean }>`
    insert into webhook_endpoints as e (tenant_id, url, events, secret_sealed)
    values (${tenantId}, ${endpoint.url}, ${endpoint.events}::text[], ${secretSealed})
    on conflict (tenant_id) do update set url = excluded.url, events = excluded.events, updated_at = now()
    returning e.url, e.events, e.created_at, e.updated_at, (xmax = 0) as created`.execute(trx)
  const { created, ...record } = rows[0]!
  return { record, created }
}

/** Replaces the signing secret; false when the tenant has no endpoint. */
export async function replaceSigningSecret(trx: TenantTx, secretSealed: string): Promise<boolean> {
  const result = await trx
    .updateTable('webhookEndpoints')
    .set({ secretSealed, updatedAt: sql<Date>`now()` })
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Removes the endpoint and every event still waiting for it (they have nowhere to go); false when there was none.
 * Delivered events stay until the purge.
 */
export async function deleteWebhookEndpoint(trx: TenantTx): Promise<boolean> {
  const result = await trx.deleteFrom('webhookEndpoints').executeTakeFirst()
  await trx.deleteFrom('webhookEvents').where('deliveredAt', 'is', null).where('givenUpAt', 'is', null).execute()
  return result.numDeletedRows > 0n
}
