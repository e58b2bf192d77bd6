import type { ClassRoster } from '../../db/repos/sms/class-roster.js'
import { findOwnedGroup, listMembers } from '../../db/repos/sms/recipient-groups.js'
import type { StoredRecipient } from '../../db/schema.js'
import type { TenantTx } from '../../db/tenant-transaction.js'
import { AppError } from '../errors.js'
import { assertRecipientCount, normalizeRecipients, type RecipientInput } from './recipients.js'

export interface ResolvedRecipients {
  recipients: StoredRecipient[]
  recipientGroupId: number | null
}

/**
 * Inline recipients XOR a group. A group is found only among the caller's own groups,
 * and its stored members (normalised when the group was made) become the message's recipients.
 */
export async function directOrGroupRecipients(
  trx: TenantTx,
  senderId: number,
  body: { recipients?: RecipientInput[] | null; recipientGroupId?: number | null },
): Promise<ResolvedRecipients> {
  const inline = body.recipients ?? undefined
  const groupId = body.recipientGroupId ?? undefined
  if (inline !== undefined && groupId !== undefined) throw new AppError('RECIPIENTS_CONFLICT')
  if (groupId === undefined) {
    assertRecipientCount(inline?.length ?? 0)
    return { recipients: normalizeRecipients(inline ?? []), recipientGroupId: null }
  }
  const group = await findOwnedGroup(trx, groupId, senderId)
  if (!group) throw new AppError('RECIPIENT_GROUP_NOT_FOUND')
  const recipients = await listMembers(trx, group.id)
  assertRecipientCount(recipients.length)
  return { recipients, recipientGroupId: group.id }
}

/**
 * Every ACTIVE enrolment with a guardian phone, addressed to the guardian under the
 * student's name. A guardian phone that is not a valid number refuses the whole send (INVALID_PHONE_NUMBER,
 * naming the student) rather than silently leaving that family out.
 */
export async function classRecipients(roster: ClassRoster, trx: TenantTx, classId: number): Promise<StoredRecipient[]> {
  const found = await roster.findClass(trx, classId)
  if (!found) throw new AppError('CLASS_NOT_FOUND')
  const enrolled = await roster.activeRecipients(trx, classId)
  if (enrolled.length === 0) throw new AppError('CLASS_HAS_NO_STUDENTS')
  assertRecipientCount(enrolled.length)
  const inputs = enrolled.map((student) => ({
    phone: student.guardianPhone,
    name: student.name,
    studentId: student.studentId,
    className: found.name,
    recipientRole: 'GUARDIAN',
  }))
  return normalizeRecipients(inputs, (index) => `guardian phone of student ${enrolled[index]!.studentId}`)
}
