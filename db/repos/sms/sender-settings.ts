import { sql, type Kysely, type Selectable } from 'kysely'
import type { TenantTx } from '../../tenant-transaction.js'
import type { DB, SmsSenderSettingsTable } from '../../schema.js'

/** Only the live provider's row is ever used (docs/api.md#sender-number); mock deployments read it too. */
export const LIVE_PROVIDER = 'extsms'

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

export type SenderSettingRecord = Pick<Selectable<SmsSenderSettingsTable>, (typeof COLUMNS)[number]>

export function findSenderSetting(trx: TenantTx, provider = LIVE_PROVIDER): Promise<SenderSettingRecord | undefined> {
  return trx.selectFrom('smsSenderSettings').select(COLUMNS).where('provider', '=', provider).executeTakeFirst()
}

/**
 * PUT sender-setting as one statement (the table in docs/api.md#sender-number): no row -> PENDING row; another
 * number, or the same number while PENDING with leftovers or REJECTED -> PENDING with the approval metadata
 * cleared; the same number while APPROVED (or already a clean PENDING) -> nothing written. `on conflict` waits
 * for a concurrent writer's row and then applies on top of it, so two PUTs never lose one another, and the
 * version moves once per effective change. Returns undefined when nothing changed (the caller re-reads).
 */
export function requestSenderNumber(
  trx: TenantTx,
  tenantId: number,
  senderNumber: string,
  provider = LIVE_PROVIDER,
): Promise<SenderSettingRecord | undefined> {
  return trx
    .insertInto('smsSenderSettings')
    .values({ tenantId, provider, senderNumber, registrationStatus: 'PENDING', updatedAt: sql`now()` })
    .onConflict((oc) =>
      oc
        .columns(['tenantId', 'provider'])
        .doUpdateSet((eb) => ({
          senderNumber: eb.ref('excluded.senderNumber'),
          registrationStatus: 'PENDING',
          rejectionReason: null,
          approvedAt: null,
          rejectedAt: null,
          version: eb('smsSenderSettings.version', '+', 1),
          updatedAt: sql<Date>`now()`,
        }))
        .where((eb) =>
          eb.or([
            eb('smsSenderSettings.senderNumber', 'is distinct from', eb.ref('excluded.senderNumber')),
            eb.and([
              eb('smsSenderSettings.registrationStatus', '!=', 'APPROVED'),
              eb.or([
                eb('smsSenderSettings.registrationStatus', '!=', 'PENDING'),
                eb('smsSenderSettings.rejectionReason', 'is not', null),
                eb('smsSenderSettings.approvedAt', 'is not', null),
                eb('smsSenderSettings.rejectedAt', 'is not', null),
              ]),
            ]),
          ]),
        ),
    )
    .returning(COLUMNS)
    .executeTakeFirst()
}

/**
 * The row as the approval call decides on it, locked until the transaction ends: the owner's PUT waits, so the
 * number checked is the number decided on.
 */
export function lockSenderSetting(trx: TenantTx, provider = LIVE_PROVIDER): Promise<SenderSettingRecord | undefined> {
  return trx.selectFrom('smsSenderSettings').select(COLUMNS).where('provider', '=', provider).forUpdate().executeTakeFirst()
}

/**
 * Whether `senderNumber` is APPROVED for a tenant other than `tenantId`, through svc_sender_number_in_use (SECURITY
 * DEFINER, a boolean only: RLS hides other tenants' rows). It also locks the number until the transaction ends, so
 * two approvals of one number for two tenants cannot both pass.
 */
export async function senderNumberInUse(trx: TenantTx, tenantId: number, senderNumber: string, provider = LIVE_PROVIDER): Promise<boolean> {
  const { rows } = await sql<{ inUse: boolean }>`
    select svc_sender_number_in_use(${tenantId}, ${provider}, ${senderNumber}) as in_use`.execute(trx)
  return rows[0]?.inUse === true
}

export type ApprovalDecision = { status: 'APPROVED' } | { status: 'REJECTED'; reason: string }

/**
 * The operator's decision (docs/api.md#signed-internal-calls): applies from any current state, sets the timestamp
 * of the decision and clears the other one. Undefined when the tenant has no row.
 */
export function decideSenderSetting(
  trx: TenantTx,
  decision: ApprovalDecision,
  provider = LIVE_PROVIDER,
): Promise<SenderSettingRecord | undefined> {
  const approved = decision.status === 'APPROVED'
  return trx
    .updateTable('smsSenderSettings')
    .set((eb) => ({
      registrationStatus: decision.status,
      rejectionReason: approved ? null : decision.reason,
      approvedAt: approved ? sql<Date>`now()` : null,
      rejectedAt: approved ? null : sql<Date>`now()`,
      version: eb('version', '+', 1),
      updatedAt: sql<Date>`now()`,
    }))
    .where('provider', '=', provider)
    .returning(COLUMNS)
    .executeTakeFirst()
}

export interface PendingSenderNumber {
  slug: string
  tenantName: string
  senderNumber: string | null
  requestedAt: Date
  /** The slug of a tenant for which the same number is already APPROVED: approving it is refused (SENDER_NUMBER_IN_USE). */
  inUseBy: string | null
}

/**
 * Every tenant's sender number awaiting an operator's decision, oldest request first. Across tenants, so through
 * svc_pending_sender_numbers() (SECURITY DEFINER, these five columns only) rather than the owner connection.
 */
export async function listPendingSenderNumbers(db: Kysely<DB>, provider = LIVE_PROVIDER): Promise<PendingSenderNumber[]> {
  const { rows } = await sql<PendingSenderNumber>`
    select tenant_slug as slug, tenant_name, sender_number, requested_at, in_use_by
    from svc_pending_sender_numbers(${provider})`.execute(db)
  return rows
}
