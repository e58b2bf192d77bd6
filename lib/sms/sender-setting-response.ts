import { Type, type Static } from '@sinclair/typebox'
import { Nullable, StringEnum } from '../http/response-types.js'
import { LIVE_PROVIDER, type SenderSettingRecord } from '../../db/repos/sms/sender-settings.js'
import { formatHyphenated } from './phone.js'

const NullableTime = Nullable(Type.String({ format: 'date-time' }))

const exampleSetting = {
  id: 1,
  provider: 'extsms',
  senderNumber: '02-1234-5678',
  registrationStatus: 'PENDING',
  rejectionReason: null,
  approvedAt: null,
  rejectedAt: null,
  createdAt: '2026-11-23T09:00:00.000Z',
  updatedAt: '2026-11-23T09:00:00.000Z',
}

/** The sender setting as the settings view shows it (OWNER GET/PUT and the internal approval answer). */
export const SenderSettingSchema = Type.Object({
  id: Nullable(Type.Integer()),
  provider: Type.String(),
  senderNumber: Nullable(Type.String()),
  registrationStatus: StringEnum(['NOT_CONFIGURED', 'PENDING', 'APPROVED', 'REJECTED'], { $id: 'SenderRegistrationStatus' }),
  rejectionReason: Nullable(Type.String()),
  approvedAt: NullableTime,
  rejectedAt: NullableTime,
  createdAt: NullableTime,
  updatedAt: NullableTime,
}, { $id: 'SenderSetting', examples: [exampleSetting] })
export type SenderSetting = Static<typeof SenderSettingSchema>

/** What every staff member may see: no number, no reasons. */
export const SenderSettingStatusSchema = Type.Object({
  provider: Type.String(),
  registrationStatus: SenderSettingSchema.properties.registrationStatus,
}, { $id: 'SenderSettingStatus', examples: [{ provider: 'extsms', registrationStatus: 'PENDING' }] })
export type SenderSettingStatus = Static<typeof SenderSettingStatusSchema>

const iso = (value: Date | null | undefined): string | null => value?.toISOString() ?? null

/**
 * No row is the synthetic NOT_CONFIGURED setting, every other field null. `provider` always names the live
 * provider, mock deployments included, because rows only ever belong to it.
 */
export function toSenderSetting(record: SenderSettingRecord | undefined): SenderSetting {
  const senderNumber = record?.senderNumber ?? null
  return {
    id: record?.id ?? null,
    provider: LIVE_PROVIDER,
    senderNumber: senderNumber === null ? null : formatHyphenated(senderNumber),
    registrationStatus: record?.registrationStatus ?? 'NOT_CONFIGURED',
    rejectionReason: record?.rejectionReason ?? null,
    approvedAt: iso(record?.approvedAt),
    rejectedAt: iso(record?.rejectedAt),
    createdAt: iso(record?.createdAt),
    updatedAt: iso(record?.updatedAt),
  }
}

export function toSenderSettingStatus(record: SenderSettingRecord | undefined): SenderSettingStatus {
  return { provider: LIVE_PROVIDER, registrationStatus: record?.registrationStatus ?? 'NOT_CONFIGURED' }
}
