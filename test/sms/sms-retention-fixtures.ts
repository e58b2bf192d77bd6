import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import { insertPendingMessage } from '../support/dispatch-fixtures.js'

// Fixtures of SMS retention (db/repos/sms/sms-retention.ts): ranges of months long past and messages placed in them.

export const DAY_MS = 86_400_000
export const RETENTION_DAYS = 400

/** Opens the range of ids of the month `monthsAgo` months back, as the upkeep did then (svc_prepare_sms_partitions). */
export async function openPastRange(owner: Kysely<DB>, monthsAgo: number): Promise<{ start: number; openedAt: Date }> {
  const openedAt = new Date()
  openedAt.setUTCDate(1)
  openedAt.setUTCMonth(openedAt.getUTCMonth() - monthsAgo)
  await sql`select svc_prepare_sms_partitions(0, ${openedAt})`.execute(owner)
  const { rows } = await sql<{ start: string }>`select svc_sms_range_start(${openedAt}::date)::text as start`.execute(owner)
  return { start: Number(rows[0]!.start), openedAt }
}

/** A staff message of `tenant` with `recipients` recipients accepted at `createdAt`, with the id `id` when given. */
export async function insertOldMessage(
  owner: Kysely<DB>,
  tenant: { tenantId: number; senderId: number },
  createdAt: Date,
  id?: number,
  recipients = 2,
): Promise<number> {
  const smsId = await insertPendingMessage(owner, {
    ...tenant,
    recipients: Array.from({ length: recipients }, (_, index) => ({ phone: `0101234${String(index).padStart(4, '0')}` })),
  })
  // The fixture's message moves to its place in time (and range): recipients first, they carry its id.
  if (id !== undefined) {
    await sql`
      with moved as (delete from sms_recipients where tenant_id = ${tenant.tenantId} and sms_id = ${smsId} returning *)
      insert into sms_recipients select tenant_id, ${id}, recipient_index, phone, name, student_id, class_name, recipient_role,
        delivery_status, provider_message_id, provider_status_code, provider_status_message, reported_at, updated_at, provider_group_id
      from moved`.execute(owner)
  }
  await sql`
    update sms_messages set created_at = ${createdAt}, id = ${id ?? smsId}
    where tenant_id = ${tenant.tenantId} and id = ${smsId}`.execute(owner)
  return id ?? smsId
}

export async function counts(owner: Kysely<DB>, tenantId: number) {
  const { rows } = await sql<{ messages: number; recipients: number; counted: number }>`
    select (select count(*)::int from sms_messages where tenant_id = ${tenantId}) as messages,
           (select count(*)::int from sms_recipients where tenant_id = ${tenantId}) as recipients,
           (select coalesce(sum(messages), 0)::int from sms_message_counts where tenant_id = ${tenantId}) as counted`.execute(owner)
  return rows[0]!
}

export async function usageTotals(owner: Kysely<DB>, tenantId: number) {
  const { rows } = await sql<{ messages: number; recipients: number }>`
    select coalesce(sum(messages), 0)::int as messages, coalesce(sum(recipients), 0)::int as recipients from (
      select messages, recipients from sms_usage where tenant_id = ${tenantId}
      union all select messages, recipients from sms_usage_changes where tenant_id = ${tenantId}) u`.execute(owner)
  return rows[0]!
}

export async function partitionExists(owner: Kysely<DB>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(owner)
  return rows[0]!.found
}
