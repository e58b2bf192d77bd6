import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import { LIVE_PROVIDER, type SenderSettingRecord } from '../../db/repos/sender-settings.js'
import { formatHyphenated } from './phone.js'

const NullableTime = Nullable(Type.String({ format: 'date-time' }))

/** The sender setting as the settings view shows it (OWNER GET/PUT and the internal approval answer). */
export const SenderSettingSchema = Type.Object({
  id: Nullable(Type.Integer()),
  provider: Type.String(),
  senderNumber: Nullable(Type.String()),
  registrationStatus: StringEnum(['NOT_CONFIGURED', 'PENDING', 'APPROVED', 'REJECTED']),
  rejectionReason: Nullable(Type.String()),
  approvedAt: NullableTime,
  rejectedAt: NullableTime,
  createdAt: NullableTime,
  updatedAt: NullableTime,
})
export type SenderSetting = Static<typeof SenderSettingSchema>

/** What every staff member may see: no number, no reasons. */
export const SenderSettingStatusSchema = Type.Object({
  provider: Type.String(),
  registrationStatus: SenderSettingSchema.properties.registrationStatus,
})
export type SenderSettingStatus = Static<typeof SenderSettingStatusSchema>

const iso = (value: Date | null): string | null => value?.toISOString() ?? null

/**
 * No row is the synthetic NOT_CONFIGURED setting. `provider` always names the live provider,
 * mock deployments included, because rows only ever belong to it.
 */
export function toSenderSetting(record: SenderSettingRecord | undefined): SenderSetting {
  if (!record) {
    return {
      id: null,
      provider: LIVE_PROVIDER,
      senderNumber: null,
      registrationStatus: 'NOT_CONFIGURED',
      rejectionReason: null,
      approvedAt: null,
      rejectedAt: null,
      createdAt: null,
      updatedAt: null,
    }
  }
  return {
    id: record.id,
    provider: LIVE_PROVIDER,
    senderNumber: record.senderNumber === null ? null : formatHyphenated(record.senderNumber),
    registrationStatus: record.registrationStatus,
    rejectionReason: record.rejectionReason,
    approvedAt: iso(record.approvedAt),
    rejectedAt: iso(record.rejectedAt),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
  }
}

export function toSenderSettingStatus(record: SenderSettingRecord | undefined): SenderSettingStatus {
  return { provider: LIVE_PROVIDER, registrationStatus: record?.registrationStatus ?? 'NOT_CONFIGURED' }
}
