import { sql, type Selectable, type Updateable } from 'kysely'
import { loginIdKey } from '../../login-key.js'
import { precompiled } from '../../driver/precompiled.js'
import { endsReadOnlyTransaction } from '../../driver/statement-flags.js'
import type { TenantTx } from '../../tenant-transaction.js'
import type { UsersTable, UserStatus } from '../../schema.js'
import type { TenantPrefixedColumns } from '../tenant-prefixed-columns.js'

// Never `select *`: upgraded databases may carry legacy columns (oauth_provider) the service must not read.
const USER_COLUMNS = ['id', 'tenantId', 'userLoginId', 'name', 'phone', 'phoneVerifiedAt', 'role', 'status', 'avatarSeed'] as const

export type UserRecord = Pick<Selectable<UsersTable>, (typeof USER_COLUMNS)[number]>

export function findUserById(trx: TenantTx, id: number): Promise<UserRecord | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst()
}

// GET /v1/me runs this on every request: compiled once (db/driver/precompiled.ts). The join lives in
// svc_signed_in_user (db/functions/svc_signed_in_user.sql), planned once per server session even when nothing is
// prepared. It is the request's only statement, so its commit travels with it (GET runs read only); a statement after
// it, or the read in a transaction that may write, is refused (db/driver/lent-connection.ts).
const userWithTenant = precompiled((_db, params: { id: number }) =>
  endsReadOnlyTransaction(sql<UserWithTenant>`select * from svc_signed_in_user(${params.id}::bigint)`),
)

export interface UserWithTenant extends UserRecord, TenantPrefixedColumns {}

/** The user and its tenant in one round trip (tenants has no RLS; the user row is still limited by it). */
export async function findUserWithTenant(trx: TenantTx, id: number): Promise<UserWithTenant | undefined> {
  const [row] = await userWithTenant(trx, { id })
  return row
}

/** The user whose login id is exactly `userLoginId` (as login resolves it: case-sensitive, unique in the tenant). */
export function findUserByLoginId(trx: TenantTx, userLoginId: string): Promise<UserRecord | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where('userLoginId', '=', userLoginId).executeTakeFirst()
}

// Whether the user has a second factor enabled (lib/account-security/second-factor): read with the password hash, so a login learns whether
// it needs a second step without a round trip of its own.
const hasSecondFactor = sql<boolean>`exists (
  select 1 from user_second_factors f
  where f.tenant_id = users.tenant_id and f.user_id = users.id
    and (f.totp_enabled_at is not null or f.sms_enabled_at is not null))`.as('secondFactor')

/** The user with its password hash (and whether a second factor is enabled), for credential checks only. */
export function findCredentialsByLoginId(trx: TenantTx, userLoginId: string) {
  return trx
    .selectFrom('users')
    .select([...USER_COLUMNS, hasSecondFactor, 'passwordHash'])
    .where('userLoginId', '=', userLoginId)
    .executeTakeFirst()
}

export function findCredentialsById(trx: TenantTx, id: number) {
  return trx.selectFrom('users').select([...USER_COLUMNS, hasSecondFactor, 'passwordHash']).where('id', '=', id).executeTakeFirst()
}

/** Serialises concurrent logins and credential changes of one user. */
export async function lockUser(trx: TenantTx, id: number): Promise<UserRecord | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst()
}

export function insertUser(
  trx: TenantTx,
  values: Pick<
    Selectable<UsersTable>,
    'tenantId' | 'userLoginId' | 'passwordHash' | 'name' | 'phone' | 'role' | 'avatarSeed'
  >,
): Promise<UserRecord> {
  return trx
    .insertInto('users')
    .values({ ...values, loginKey: loginIdKey(values.userLoginId), updatedAt: new Date() })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow()
}

export async function updatePasswordHash(trx: TenantTx, id: number, passwordHash: string): Promise<void> {
  await trx.updateTable('users').set({ passwordHash, updatedAt: new Date() }).where('id', '=', id).execute()
}

/** Changes the given columns of one user and stamps updatedAt; the updated user, or undefined when it is not visible. */
function updateUser(trx: TenantTx, id: number, changes: Updateable<UsersTable>): Promise<UserRecord | undefined> {
  return trx
    .updateTable('users')
    .set({ ...changes, updatedAt: new Date() })
    .where('id', '=', id)
    .returning(USER_COLUMNS)
    .executeTakeFirst()
}

/** PATCH /v1/me's name. Returns the updated user, or undefined when it is not visible. */
export function updateName(trx: TenantTx, id: number, name: string): Promise<UserRecord | undefined> {
  return updateUser(trx, id, { name })
}

/**
 * Replaces the user's phone; lib/account-security/phone/phone-change.ts is its one caller, which locked the row first and records the
 * change. The users_phone_changed trigger clears the verified mark and the live codes.
 */
export function replacePhone(trx: TenantTx, id: number, phone: string | null): Promise<UserRecord | undefined> {
  return updateUser(trx, id, { phone })
}

/** Whether the user's phone replaced a verified one less than `hours` ago (users.verified_phone_replaced_at). */
export async function phoneChangeHeld(trx: TenantTx, id: number, hours: number): Promise<boolean> {
  const row = await trx
    .selectFrom('users')
    .select(sql<boolean>`coalesce(verified_phone_replaced_at > now() - ${hours} * interval '1 hour', false)`.as('held'))
    .where('id', '=', id)
    .executeTakeFirst()
  return row?.held ?? false
}

/**
 * Marks the user's phone verified, only while it is still `phone` (the number the code went to); false otherwise. A
 * later change of phone clears the mark again (the users_phone_changed trigger).
 */
export async function markPhoneVerified(trx: TenantTx, id: number, phone: string): Promise<boolean> {
  const result = await trx
    .updateTable('users')
    .set({ phoneVerifiedAt: sql`now()`, updatedAt: new Date() })
    .where('id', '=', id)
    .where('phone', '=', phone)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export function updateAvatarSeed(trx: TenantTx, id: number, avatarSeed: string): Promise<UserRecord | undefined> {
  return updateUser(trx, id, { avatarSeed })
}

export function updateUserStatus(trx: TenantTx, id: number, status: UserStatus): Promise<UserRecord | undefined> {
  return updateUser(trx, id, { status })
}

/**
 * Changes a login id in both places it lives, in one statement: the user row and, for an owner, the owner
 * directory (no RLS, keyed globally by login id), which the users row's trigger keeps in step
 * (db/functions/svc_sync_owner_entry.sql: the runtime role may not update the directory itself). A taken id, or one
 * equal to a taken one after NFKC and case folding (the login key), fails on either unique key. Returns false when
 * the user is not visible in this tenant.
 */
export async function changeUserLoginId(trx: TenantTx, id: number, userLoginId: string): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    update users set user_login_id = ${userLoginId}, login_key = ${loginIdKey(userLoginId)},
                     legacy_login_key_duplicate = false, updated_at = now()
    where id = ${id}
    returning id`.execute(trx)
  return rows.length > 0
}

/** Avatar seeds of many users in one query; ids not visible in this tenant are simply absent. */
export function findAvatarSeeds(
  trx: TenantTx,
  ids: readonly number[],
): Promise<Array<Pick<UserRecord, 'id' | 'avatarSeed'>>> {
  return trx
    .selectFrom('users')
    .select(['id', 'avatarSeed'])
    .where(sql<boolean>`id = any(${[...ids]}::bigint[])`)
    .execute()
}
