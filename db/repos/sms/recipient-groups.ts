import { sql, type Selectable } from 'kysely'
import type { RecipientGroupsTable, StoredRecipient } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import { unnestedRecipients } from './unnested-recipients.js'

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
    select ${tenantId}, ${groupId}, r.ord - 1, r.phone, r.name, r.student_id, r.class_name, r.recipient_role
    from ${unnestedRecipients(members)}`.execute(trx)
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
