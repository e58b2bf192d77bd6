import { sql, type Selectable } from 'kysely'
import type { OneTimeCodePurpose, OneTimeCodesTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

/** One live code per user and purpose: the row's key. */
export interface CodeSlot {
  tenantId: number
  userId: number
  purpose: OneTimeCodePurpose
}

export interface NewCode extends CodeSlot {
  codeHash: string
  phone: string
  ttlSeconds: number
  resendSeconds: number
}

/** A replacement's outcome: when the new code expires, or, refused, the whole seconds (at least 1) to wait. */
export type Replacement = { expiresAt: Date } | { expiresAt: null; secondsToResend: number }

/**
 * Stores a new code in its slot, replacing the previous one (its hash, number and wrong tries), unless the previous
 * one's resend interval still runs. One statement, so two requests at once cannot both replace it, and a refusal
 * costs no second round trip for its wait.
 */
export async function replaceCode(trx: TenantTx, code: NewCode): Promise<Replacement> {
  const { rows } = await sql<{ expiresAt: Date | null; secondsToResend: number | null }>`
    with previous as (
      select resend_after from one_time_codes
      where tenant_id = ${code.tenantId} and user_id = ${code.userId} and purpose = ${code.purpose}
    ), stored as (
      insert into one_time_codes as c (tenant_id, user_id, purpose, code_hash, phone, attempts, expires_at, resend_after, created_at)
      values (${code.tenantId}, ${code.userId}, ${code.purpose}, ${code.codeHash}, ${code.phone}, 0,
              now() + make_interval(secs => ${code.ttlSeconds}), now() + make_interval(secs => ${code.resendSeconds}), now())
      on conflict (tenant_id, user_id, purpose) do update set
        code_hash = excluded.code_hash, phone = excluded.phone, attempts = 0, expires_at = excluded.expires_at,
        resend_after = excluded.resend_after, created_at = excluded.created_at
      where c.resend_after <= now()
      returning expires_at
    )
    select (select expires_at from stored) as expires_at,
           (select ceil(extract(epoch from resend_after - now()))::int from previous) as seconds_to_resend`.execute(trx)
  const row = rows[0]
  if (row?.expiresAt) return { expiresAt: row.expiresAt }
  // The previous code's wait as this statement's snapshot saw it; 1 when a concurrent request stored it meanwhile.
  return { expiresAt: null, secondsToResend: Math.max(1, row?.secondsToResend ?? 1) }
}

export type LockedCode = Pick<Selectable<OneTimeCodesTable>, 'codeHash' | 'phone' | 'attempts'> & { expired: boolean }

/**
 * The slot's code, locked until the transaction ends: of two checks of one code, the second waits for the first and
 * then finds what it left (nothing, once the first used the code up). Expiry is judged by the database's clock.
 */
export function lockCode(trx: TenantTx, slot: CodeSlot): Promise<LockedCode | undefined> {
  return trx
    .selectFrom('oneTimeCodes')
    .select(['codeHash', 'phone', 'attempts', sql<boolean>`expires_at <= now()`.as('expired')])
    .where('tenantId', '=', slot.tenantId)
    .where('userId', '=', slot.userId)
    .where('purpose', '=', slot.purpose)
    .forUpdate()
    .executeTakeFirst()
}

/** Counts one wrong try of the slot's code; returns the tries so far (undefined when the slot is empty). */
export async function countWrongAttempt(trx: TenantTx, slot: CodeSlot): Promise<number | undefined> {
  const row = await trx
    .updateTable('oneTimeCodes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('tenantId', '=', slot.tenantId)
    .where('userId', '=', slot.userId)
    .where('purpose', '=', slot.purpose)
    .returning('attempts')
    .executeTakeFirst()
  return row?.attempts
}

/** Empties the slot (a code used up, expired or sent to a number the user no longer has); true when it held one. */
export async function deleteCode(trx: TenantTx, slot: CodeSlot): Promise<boolean> {
  const result = await trx
    .deleteFrom('oneTimeCodes')
    .where('tenantId', '=', slot.tenantId)
    .where('userId', '=', slot.userId)
    .where('purpose', '=', slot.purpose)
    .executeTakeFirst()
  return result.numDeletedRows > 0n
}
