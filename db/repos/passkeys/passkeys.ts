import { sql, type Insertable, type Selectable } from 'kysely'
import type { PasskeysTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'

/** What a passkey's owner sees of it (GET /v1/me/passkeys). */
export type PasskeySummary = Pick<Selectable<PasskeysTable>, 'id' | 'name' | 'createdAt' | 'lastUsedAt'>

/** What a sign-in needs to check an assertion. */
export type StoredPasskey = Pick<Selectable<PasskeysTable>, 'id' | 'userId' | 'credentialId' | 'publicKey' | 'counter' | 'transports'>

const SUMMARY = ['id', 'name', 'createdAt', 'lastUsedAt'] as const

export function listPasskeys(trx: TenantTx, owner: { tenantId: number; userId: number }): Promise<PasskeySummary[]> {
  return trx
    .selectFrom('passkeys')
    .select(SUMMARY)
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .orderBy('createdAt', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

/** The credential ids of a user's passkeys (an enrolment's excludeCredentials). */
export async function passkeyCredentialIds(trx: TenantTx, owner: { tenantId: number; userId: number }): Promise<Array<{ credentialId: string; transports: string[] }>> {
  return trx
    .selectFrom('passkeys')
    .select(['credentialId', 'transports'])
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .execute()
}

/**
 * How many passkeys the user has, with the user's row locked until the transaction ends, so that two enrolments of
 * one user count one after the other (the limit holds under concurrency).
 */
export async function countPasskeysLocked(trx: TenantTx, owner: { tenantId: number; userId: number }): Promise<number> {
  await trx.selectFrom('users').select('id').where('tenantId', '=', owner.tenantId).where('id', '=', owner.userId).forUpdate().execute()
  const row = await trx
    .selectFrom('passkeys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

/** Stores a passkey; the trigger on passkeys enters it in passkey_directory in the same statement. */
export function insertPasskey(trx: TenantTx, passkey: Insertable<PasskeysTable>): Promise<PasskeySummary> {
  return trx.insertInto('passkeys').values(passkey).returning(SUMMARY).executeTakeFirstOrThrow()
}

export function renamePasskey(trx: TenantTx, owner: { tenantId: number; userId: number }, id: number, name: string): Promise<PasskeySummary | undefined> {
  return trx
    .updateTable('passkeys')
    .set({ name })
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('id', '=', id)
    .returning(SUMMARY)
    .executeTakeFirst()
}

/** Removes one passkey of the user (and, by the trigger, its directory entry); false when the user has no such one. */
export async function deletePasskey(trx: TenantTx, owner: { tenantId: number; userId: number }, id: number): Promise<boolean> {
  const removed = await trx
    .deleteFrom('passkeys')
    .where('tenantId', '=', owner.tenantId)
    .where('userId', '=', owner.userId)
    .where('id', '=', id)
    .executeTakeFirst()
  return removed.numDeletedRows > 0n
}

/** Removes every passkey of a user (deleteUser); the count removed. */
export async function deleteUserPasskeys(trx: TenantTx, owner: { tenantId: number; userId: number }): Promise<number> {
  const removed = await trx.deleteFrom('passkeys').where('tenantId', '=', owner.tenantId).where('userId', '=', owner.userId).executeTakeFirst()
  return Number(removed.numDeletedRows)
}

/** The passkey with this credential id, its row locked so that two sign-ins with it check the counter in turn. */
export function findPasskeyForSignIn(trx: TenantTx, tenantId: number, credentialId: string): Promise<StoredPasskey | undefined> {
  return trx
    .selectFrom('passkeys')
    .select(['id', 'userId', 'credentialId', 'publicKey', 'counter', 'transports'])
    .where('tenantId', '=', tenantId)
    .where('credentialId', '=', credentialId)
    .forUpdate()
    .executeTakeFirst()
}

/** After a verified assertion: the counter seen (never lowered) and the time of use. */
export async function recordPasskeyUse(trx: TenantTx, tenantId: number, id: number, counter: number): Promise<void> {
  await trx
    .updateTable('passkeys')
    .set({ counter: sql<number>`greatest(counter, ${counter})`, lastUsedAt: sql<Date>`now()` })
    .where('tenantId', '=', tenantId)
    .where('id', '=', id)
    .execute()
}
