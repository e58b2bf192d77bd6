import { sql, type Selectable } from 'kysely'
import type { RecipientGroupsTable, StoredRecipient } from '../schema.js'
import type { TenantTx } from '../tenant.js'

const COLUMNS = ['id', 'ownerStaffId', 'name', 'icon', 'recipientCount', 'createdAt', 'updatedAt'] as const

export type GroupRecord = Pick<Selectable<RecipientGroupsTable>, (typeof COLUMNS)[number]>

export function insertGroup(
  trx: TenantTx,
  group: Pick<Selectable<RecipientGroupsTable>, 'tenantId' | 'ownerStaffId' | 'name' | 'icon' | 'recipientCount'>,
): Promise<GroupRecord> {
  return trx
    .insertInto('recipientGroups')
    .values({ ...group, updatedAt: sql<Date>`now()` })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()
}

/** All members in one statement (array parameters unnested), however many there are. */
export async function insertMembers(
  trx: TenantTx,
  tenantId: number,
  groupId: number,
  members: readonly StoredRecipient[],
): Promise<void> {
  await sql`
    insert into recipient_group_members
      (tenant_id, group_id, member_index, phone, name, student_id, class_name, recipient_role)
    select ${tenantId}, ${groupId}, m.ord - 1, m.phone, m.name, m.student_id, m.class_name, m.recipient_role
    from unnest(
      ${members.map((m) => m.phone)}::text[],
      ${members.map((m) => m.name)}::text[],
      ${members.map((m) => m.studentId)}::bigint[],
      ${members.map((m) => m.className)}::text[],
      ${members.map((m) => m.recipientRole)}::text[]
    ) with ordinality as m (phone, name, student_id, class_name, recipient_role, ord)`.execute(trx)
}

/** Groups belong to the staff member who made them (docs/api.md#recipient-groups); anyone else finds nothing. */
export function findOwnedGroup(trx: TenantTx, id: number, ownerStaffId: number): Promise<GroupRecord | undefined> {
  return trx
    .selectFrom('recipientGroups')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('ownerStaffId', '=', ownerStaffId)
    .executeTakeFirst()
}

export function listMembers(trx: TenantTx, groupId: number): Promise<StoredRecipient[]> {
  return trx
    .selectFrom('recipientGroupMembers')
    .select(['phone', 'name', 'studentId', 'className', 'recipientRole'])
    .where('groupId', '=', groupId)
    .orderBy('memberIndex')
    .execute()
}

/** Newest first (index recipient_groups_owner); the id breaks ties between groups made in the same instant. */
export function listOwnedGroups(trx: TenantTx, ownerStaffId: number): Promise<GroupRecord[]> {
  return trx
    .selectFrom('recipientGroups')
    .select(COLUMNS)
    .where('ownerStaffId', '=', ownerStaffId)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .execute()
}
