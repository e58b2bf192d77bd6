import { sql } from 'kysely'
import type { ClassRoster } from '../../lib/sms/class-roster.js'

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
