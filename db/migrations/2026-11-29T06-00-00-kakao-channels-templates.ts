import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// KakaoTalk notices (AlimTalk, docs/api.md#kakaotalk-notices): the tenant's business channel and the templates it
// imported from the provider, where they are written and inspected.
// - kakao_channels: at most one per tenant. pf_id is the provider's channelId, search_id the channel's name in
//   KakaoTalk search, both as the provider answered when the channel was linked.
// - kakao_templates: a copy of a provider template, refreshed on demand. variables are the names inside #{...} of
//   content, in order of first use; buttons are kept as the provider gave them. One row per provider template and
//   tenant, so importing it again refreshes that row.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table kakao_channels (
      tenant_id bigint primary key references tenants (id),
      pf_id varchar(100) not null,
      search_id varchar(100) not null,
      linked_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`select svc_protect_tenant_table('kakao_channels')`.execute(db)
  await sql`revoke truncate, references, trigger on kakao_channels from svc_app`.execute(db)

  await sql`
    create table kakao_templates (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      provider_template_id varchar(100) not null,
      name varchar(200) not null,
      content text not null,
      variables text[] not null,
      buttons jsonb not null default '[]',
      status varchar(20) not null check (status in ('PENDING', 'INSPECTING', 'APPROVED', 'REJECTED')),
      refreshed_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      primary key (tenant_id, id),
      constraint kakao_templates_provider_id unique (tenant_id, provider_template_id)
    )`.execute(db)
  await sql`create index kakao_templates_recent on kakao_templates (tenant_id, created_at desc, id desc)`.execute(db)
  await sql`select svc_protect_tenant_table('kakao_templates')`.execute(db)
  await sql`revoke truncate, references, trigger on kakao_templates from svc_app`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table kakao_templates`.execute(db)
  await sql`drop table kakao_channels`.execute(db)
}
