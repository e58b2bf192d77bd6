import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../http/response-types.js'
import type { GroupRecord } from '../../db/repos/sms/recipient-groups.js'
import type { StoredRecipient } from '../../db/schema.js'
import { RecipientResponseSchema, toRecipientResponse } from './message-response.js'

const Time = Type.String({ format: 'date-time' })

// The demo owner's group (README "Try it"), as the list shows it and with one of its members.
const exampleSummary = {
  id: 1,
  name: 'All guardians',
  icon: null,
  recipientCount: 5,
  createdAt: '2026-11-23T09:00:00.000Z',
  updatedAt: '2026-11-23T09:00:00.000Z',
}
const exampleMember = {
  phone: '010-****-0001',
  name: 'Choi Minji',
  studentId: 4,
  className: null,
  recipientRole: 'GUARDIAN',
  deliveryStatus: null,
  deliveredVia: null,
}

/** The list view, with no phone data at all. */
export const GroupSummarySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  icon: Nullable(Type.String()),
  recipientCount: Type.Integer(),
  createdAt: Time,
  updatedAt: Time,
}, { $id: 'RecipientGroupSummary', examples: [exampleSummary] })
export type GroupSummary = Static<typeof GroupSummarySchema>

/** A group: the summary plus the members, phones masked. */
export const GroupResponseSchema = Type.Object({
  ...GroupSummarySchema.properties,
  recipients: Type.Array(RecipientResponseSchema),
}, { $id: 'RecipientGroup', examples: [{ ...exampleSummary, recipients: [exampleMember] }] })
export type GroupResponse = Static<typeof GroupResponseSchema>

export function toGroupSummary(group: GroupRecord): GroupSummary {
  return {
    id: group.id,
    name: group.name,
    icon: group.icon,
    recipientCount: group.recipientCount,
    createdAt: group.createdAt.toISOString(),
    updatedAt: group.updatedAt.toISOString(),
  }
}

export function toGroupResponse(group: GroupRecord, members: readonly StoredRecipient[]): GroupResponse {
  return { ...toGroupSummary(group), recipients: members.map((member) => toRecipientResponse(member)) }
}
