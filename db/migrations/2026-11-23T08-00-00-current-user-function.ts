import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// GET /v1/me read its user and tenant with one join the service sent as its own statement. Behind a transaction
// pooler nothing is prepared, and PostgreSQL planned that join (with the users RLS policy) on every request; in a
// PL/pgSQL function it is planned once per server session. SECURITY INVOKER: the users row stays under RLS.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function svc_current_user(p_user_id bigint)
    returns table (
      id bigint, tenant_id bigint, user_login_id varchar, name varchar, phone varchar, role varchar, status varchar,
      avatar_seed varchar, tenant_slug varchar, tenant_custom_id varchar, tenant_custom_domain varchar,
      tenant_name varchar, tenant_status varchar, tenant_onboarding_completed_at timestamptz
    )
    language plpgsql stable security invoker as $$
    #variable_conflict use_column
    begin
      return query
        select u.id, u.tenant_id, u.user_login_id, u.name, u.phone, u.role, u.status, u.avatar_seed,
               t.slug, t.custom_id, t.custom_domain, t.name, t.status, t.onboarding_completed_at
        from users u join tenants t on t.id = u.tenant_id
        where u.id = p_user_id;
    end
    $$`.execute(db)
  await sql`grant execute on function svc_current_user(bigint) to svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function svc_current_user(bigint)`.execute(db)
}
