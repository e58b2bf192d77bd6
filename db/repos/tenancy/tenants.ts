import type { Kysely, Selectable, Transaction } from 'kysely'
import { loginIdKey } from '../../login-key.js'
import type { DB, OwnerDirectoryTable, TenantsTable } from '../../schema.js'

// tenants and owner_directory have no RLS: these functions take the root handle (or any transaction).
type Root = Kysely<DB> | Transaction<DB>

const TENANT_COLUMNS = ['id', 'slug', 'customId', 'customDomain', 'name', 'status', 'onboardingCompletedAt'] as const

export type Tenant = Pick<Selectable<TenantsTable>, (typeof TENANT_COLUMNS)[number]>

export function findTenantBySlug(db: Root, slug: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').select(TENANT_COLUMNS).where('slug', '=', slug).executeTakeFirst()
}

export function findTenantByCustomId(db: Root, customId: string): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').select(TENANT_COLUMNS).where('customId', '=', customId).executeTakeFirst()
}

export function findTenantById(db: Root, id: number): Promise<Tenant | undefined> {
  return db.selectFrom('tenants').select(TENANT_COLUMNS).where('id', '=', id).executeTakeFirst()
}

export function insertTenant(
  db: Root,
  // A tenant is only ever registered with its business number, though the column allows null.
  values: Pick<Selectable<TenantsTable>, 'slug' | 'customId' | 'name'> & { businessRegistrationNumber: string },
): Promise<Tenant> {
  return db
    .insertInto('tenants')
    .values({ ...values, updatedAt: new Date() })
    .returning(TENANT_COLUMNS)
    .executeTakeFirstOrThrow()
}

/** The owner whose login id is `userLoginId`, or equals it after NFKC and case folding (its login key). */
export function findOwnerEntry(db: Root, userLoginId: string) {
  return db
    .selectFrom('ownerDirectory')
    .select(['tenantId', 'userId', 'userLoginId'])
    .where('loginKey', '=', loginIdKey(userLoginId))
    .executeTakeFirst()
}

export async function insertOwnerEntry(
  db: Root,
  entry: Pick<Selectable<OwnerDirectoryTable>, 'userLoginId' | 'tenantId' | 'userId'>,
): Promise<void> {
  await db.insertInto('ownerDirectory').values({ ...entry, loginKey: loginIdKey(entry.userLoginId) }).execute()
}
