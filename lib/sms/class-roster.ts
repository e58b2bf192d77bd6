import type { TenantTx } from '../../db/tenant.js'

export interface RosterClass {
  id: number
  name: string
}

export interface RosterRecipient {
  studentId: number
  name: string
  guardianPhone: string
}

/**
 * The one way class sends (docs/api.md#class-sends) read the academy's class module. The module may replace the
 * Kysely implementation (db/repos/class-roster.ts) with its own; callers depend only on this shape.
 */
export interface ClassRoster {
  /** The class when it exists in the transaction's tenant. */
  findClass(trx: TenantTx, classId: number): Promise<RosterClass | undefined>
  /** Every ACTIVE enrolment with a guardian phone, in a stable order (enrolment order). */
  activeRecipients(trx: TenantTx, classId: number): Promise<RosterRecipient[]>
}
