import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// tenants and owner_directory have no RLS: they are read before any tenant is known. The default privileges gave
// the runtime role UPDATE and DELETE on them, so a runtime statement could suspend, rename or delete any tenant, or
// take over any owner's root-entry login id. The runtime only inserts into both (registration); an owner's login id
// change now reaches owner_directory through a SECURITY DEFINER trigger on users (svc_sync_owner_entry), confined to
// the entry of the users row renamed, which RLS confines to the caller's tenant. Status changes and the like are
// the owner's (operations), not the service's.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`revoke update, delete, truncate, references, trigger on tenants, owner_directory from svc_app`.execute(db)
  await defineFunction(db, 'svc_sync_owner_entry')
  await sql`
    create trigger users_sync_owner_entry after update of user_login_id on users
    for each row when (old.user_login_id is distinct from new.user_login_id)
    execute function svc_sync_owner_entry()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_sync_owner_entry on users`.execute(db)
  await sql`drop function svc_sync_owner_entry()`.execute(db)
  await sql`grant update, delete on tenants, owner_directory to svc_app`.execute(db)
}
