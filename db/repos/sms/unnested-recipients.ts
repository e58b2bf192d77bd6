import { sql, type RawBuilder } from 'kysely'
import type { StoredRecipient } from '../../schema.js'

/**
 * Recipients as rows for one set-based insert: five array parameters unnested side by side into
 * `r (phone, name, student_id, class_name, recipient_role, ord)`, `ord` counting from 1 in list order. Five
 * parameters however many recipients, so 10,000 are one round trip and never approach PostgreSQL's
 * 65,535-parameter limit. Use it as `from ${unnestedRecipients(list)}` and select `r.` columns. `statuses`, one per
 * recipient, adds the column `r.delivery_status` (unnested beside the others: an array subscript per row would walk
 * the array each time).
 */
export function unnestedRecipients(recipients: readonly StoredRecipient[], statuses?: readonly string[]): RawBuilder<unknown> {
  if (statuses === undefined) {
    return sql`unnest(
      ${recipients.map((r) => r.phone)}::text[],
      ${recipients.map((r) => r.name)}::text[],
      ${recipients.map((r) => r.studentId)}::bigint[],
      ${recipients.map((r) => r.className)}::text[],
      ${recipients.map((r) => r.recipientRole)}::text[]
    ) with ordinality as r (phone, name, student_id, class_name, recipient_role, ord)`
  }
  return sql`unnest(
      ${recipients.map((r) => r.phone)}::text[],
      ${recipients.map((r) => r.name)}::text[],
      ${recipients.map((r) => r.studentId)}::bigint[],
      ${recipients.map((r) => r.className)}::text[],
      ${recipients.map((r) => r.recipientRole)}::text[],
      ${statuses}::text[]
    ) with ordinality as r (phone, name, student_id, class_name, recipient_role, delivery_status, ord)`
}
