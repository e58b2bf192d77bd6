import type { TenantTx } from '../tenant.js'
import type { Role, UserStatus } from '../schema.js'

export interface UserRecord {
  id: number
  tenantId: number
  userLoginId: string
  name: string
  phone: string | null
  role: Role
  status: UserStatus
  avatarSeed: string
}

// Never `select *`: upgraded databases may carry legacy columns (oauth_provider) the service must not read.
const USER_COLUMNS = ['id', 'tenantId', 'userLoginId', 'name', 'phone', 'role', 'status', 'avatarSeed'] as const

export function findUserById(trx: TenantTx, id: number): Promise<UserRecord | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst()
}

/** The user with its password hash, for credential checks only. */
export function findCredentialsByLoginId(trx: TenantTx, userLoginId: string) {
  return trx
    .selectFrom('users')
    .select([...USER_COLUMNS, 'passwordHash'])
    .where('userLoginId', '=', userLoginId)
    .executeTakeFirst()
}

export function findCredentialsById(trx: TenantTx, id: number) {
  return trx.selectFrom('users').select([...USER_COLUMNS, 'passwordHash']).where('id', '=', id).executeTakeFirst()
}

/** Serialises concurrent logins and credential changes of one user. */
export async function lockUser(trx: TenantTx, id: number): Promise<UserRecord | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst()
}

export function insertUser(
  trx: TenantTx,
  values: {
    tenantId: number
    userLoginId: string
    passwordHash: string
    name: string
    phone: string | null
    role: Role
    avatarSeed: string
  },
): Promise<UserRecord> {
  return trx
    .insertInto('users')
    .values({ ...values, updatedAt: new Date() })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow()
}

export async function updatePasswordHash(trx: TenantTx, id: number, passwordHash: string): Promise<void> {
  await trx.updateTable('users').set({ passwordHash, updatedAt: new Date() }).where('id', '=', id).execute()
}
