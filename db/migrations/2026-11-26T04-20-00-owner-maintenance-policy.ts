import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Tenant tables force row-level security, which binds their owner too unless it is a superuser. The maintenance
// functions (svc_purge_expired, svc_purge_audit_events, svc_roll_up_sms_usage) are SECURITY DEFINER and so run as
// that owner, with no tenant bound: under an owner that is not a superuser (a CREATEROLE migrating role, as the
// operations guide allows) they found no row at all, so expired rows, old audit events and usage deltas were never
// removed. owner_maintenance lets the owner role, and only it, reach every row; svc_protect_tenant_table adds it to
// every table created from now on, this adds it to the tables that lack it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    do $$
    declare
      target regclass;
    begin
      for target in
        select p.polrelid::regclass from pg_policy p
        where p.polname = 'tenant_isolation'
          and not exists (select 1 from pg_policy o where o.polrelid = p.polrelid and o.polname = 'owner_maintenance')
      loop
        execute format('create policy owner_maintenance on %s to %I using (true) with check (true)', target, current_user);
      end loop;
    end
    $$`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    do $$
    declare
      target regclass;
    begin
      for target in select polrelid::regclass from pg_policy where polname = 'owner_maintenance' loop
        execute format('drop policy owner_maintenance on %s', target);
      end loop;
    end
    $$`.execute(db)
}
