import { sql, type Selectable } from 'kysely'
import type { ClassEnrollmentsTable, ClassesTable, UsersTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

export type RosterClass = Pick<Selectable<ClassesTable>, 'id' | 'name'>

/** An enrolment, its student's name, and the guardian phone, never null here (enrolments without one are left out). */
export type RosterRecipient = Pick<Selectable<ClassEnrollmentsTable>, 'studentId'> &
  Pick<Selectable<UsersTable>, 'name'> & { guardianPhone: NonNullable<ClassEnrollmentsTable['guardianPhone']> }

/**
 * The one way class sends (docs/api.md#class-sends) read the academy's class module. The module may replace the
 * Kysely implementation below with its own; callers (lib/sms/send-recipients.ts) depend only on this shape.
 */
export interface ClassRoster {
  /** The class when it exists in the transaction's tenant. */
  findClass(trx: TenantTx, classId: number): Promise<RosterClass | undefined>
  /** Every ACTIVE enrolment with a guardian phone, in a stable order (enrolment order). */
  activeRecipients(trx: TenantTx, classId: number): Promise<RosterRecipient[]>
}

/** ClassRoster over the `classes` and `class_enrollments` tables (docs/api.md#class-sends); RLS keeps it in-tenant. */
export const kyselyClassRoster: ClassRoster = {
  findClass(trx, classId) {
    return trx.selectFrom('classes').select(['id', 'name']).where('id', '=', classId).executeTakeFirst()
  },

  async activeRecipients(trx, classId) {
    const rows = await trx
      .selectFrom('classEnrollments as e')
      .innerJoin('users as u', (join) => join.onRef('u.tenantId', '=', 'e.tenantId').onRef('u.id', '=', 'e.studentId'))
      .select(['e.studentId', 'u.name', 'e.guardianPhone'])
      .where('e.classId', '=', classId)
      .where('e.status', '=', 'ACTIVE')
      // A blank phone is no phone: that student simply has no guardian to text, like a null.
      .where(sql<string>`btrim(e.guardian_phone)`, '<>', '')
      .orderBy('e.id')
      .execute()
    return rows.map((row) => ({ studentId: row.studentId, name: row.name, guardianPhone: row.guardianPhone! }))
  },
}
