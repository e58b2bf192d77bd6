import { sql, type Selectable } from 'kysely'
import type { KakaoChannelsTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export type KakaoChannelRecord = Pick<Selectable<KakaoChannelsTable>, 'pfId' | 'searchId'>

export function findKakaoChannel(trx: TenantTx): Promise<KakaoChannelRecord | undefined> {
  return trx.selectFrom('kakaoChannels').select(['pfId', 'searchId']).executeTakeFirst()
}

/**
 * Links `channel` as the tenant's, replacing any other. `linked` is true when the pfId is new to the tenant (the
 * same pfId again only takes the provider's current searchId), so only a real change is audited.
 */
export async function saveKakaoChannel(
  trx: TenantTx,
  tenantId: number,
  channel: KakaoChannelRecord,
): Promise<{ record: KakaoChannelRecord; linked: boolean; previousPfId: string | null }> {
  // Locked, so two links at once report each other's pfId as the previous one.
  const previous = await trx.selectFrom('kakaoChannels').select('pfId').forUpdate().executeTakeFirst()
  const { rows } = await sql<KakaoChannelRecord>`
    insert into kakao_channels as c (tenant_id, pf_id, search_id)
    values (${tenantId}, ${channel.pfId}, ${channel.searchId})
    on conflict (tenant_id) do update
      set pf_id = excluded.pf_id, search_id = excluded.search_id, updated_at = now(),
          linked_at = case when c.pf_id = excluded.pf_id then c.linked_at else now() end
    returning c.pf_id, c.search_id`.execute(trx)
  const record = rows[0]!
  const previousPfId = previous?.pfId ?? null
  return { record, linked: previousPfId !== record.pfId, previousPfId }
}

/** Unlinks the tenant's channel; the pfId it had, or undefined when none was linked. */
export async function deleteKakaoChannel(trx: TenantTx): Promise<string | undefined> {
  const row = await trx.deleteFrom('kakaoChannels').returning('pfId').executeTakeFirst()
  return row?.pfId
}
