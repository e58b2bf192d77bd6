import type { TenantTx } from '../tenant.js'
import type { RegistrationStatus } from '../schema.js'

/** Only the live provider's row is ever used (SPEC "Sender setting"); mock deployments read it too. */
export const LIVE_PROVIDER = 'extsms'

export interface SenderSettingRecord {
  id: number
  provider: string
  senderNumber: string | null
  registrationStatus: RegistrationStatus
  rejectionReason: string | null
  approvedAt: Date | null
  rejectedAt: Date | null
  version: number
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = [
  'id',
  'provider',
  'senderNumber',
  'registrationStatus',
  'rejectionReason',
  'approvedAt',
  'rejectedAt',
  'version',
  'createdAt',
  'updatedAt',
] as const

export function findSenderSetting(trx: TenantTx, provider = LIVE_PROVIDER): Promise<SenderSettingRecord | undefined> {
  return trx.selectFrom('smsSenderSettings').select(COLUMNS).where('provider', '=', provider).executeTakeFirst()
}
