import { sql, type Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table sms_sender_settings (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      provider varchar(20) not null,
      sender_number varchar(20),
      registration_status varchar(20) not null check (registration_status in ('PENDING', 'APPROVED', 'REJECTED')),
      rejection_reason varchar(500),
      approved_at timestamptz,
      rejected_at timestamptz,
      version integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, id),
      unique (tenant_id, provider)
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_sender_settings')`.execute(db)

  await sql`
    create table sms_templates (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      name varchar(100) not null,
      content text not null,
      category varchar(20) not null check (category in ('GENERAL', 'ATTENDANCE', 'PAYMENT', 'EXAM', 'CUSTOM')),
      created_by bigint not null,
      version integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, id)
    )`.execute(db)
  await sql`create index sms_templates_recent on sms_templates (tenant_id, created_at desc, id desc)`.execute(db)
  await sql`select svc_protect_tenant_table('sms_templates')`.execute(db)

  await sql`
    create table recipient_groups (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      owner_staff_id bigint not null,
      name varchar(100) not null,
      icon varchar(50),
      recipient_count integer not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, id),
      foreign key (tenant_id, owner_staff_id) references users (tenant_id, id)
    )`.execute(db)
  await sql`create index recipient_groups_owner on recipient_groups (tenant_id, owner_staff_id, created_at desc)`.execute(db)
  await sql`select svc_protect_tenant_table('recipient_groups')`.execute(db)

  await sql`
    create table recipient_group_members (
      tenant_id bigint not null,
      group_id bigint not null,
      member_index integer not null,
      phone varchar(20) not null,
      name varchar(100),
      student_id bigint,
      class_name varchar(100),
      recipient_role varchar(20),
      primary key (tenant_id, group_id, member_index),
      foreign key (tenant_id, group_id) references recipient_groups (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('recipient_group_members')`.execute(db)

  // The message row is also the dispatch outbox: PENDING rows whose next_attempt_at has come are due, and a
  // claim (token + lease) marks the instance working on one.
  await sql`
    create table sms_messages (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      sender_id bigint not null,
      sender_number varchar(20),
      recipient_type varchar(20) not null,
      recipient_count integer not null,
      title varchar(200) not null,
      recipient_group_id bigint,
      content text not null,
      template_id bigint,
      scheduled_at timestamptz,
      cancelled_at timestamptz,
      sent_at timestamptz,
      message_type varchar(3) not null check (message_type in ('SMS', 'LMS')),
      estimated_segments integer not null,
      unit_price integer not null,
      total_price integer not null,
      status varchar(20) not null default 'PENDING'
        check (status in ('PENDING', 'DISPATCHED', 'SENT', 'FAILED', 'PARTIAL', 'CANCELLED')),
      success_count integer not null default 0,
      fail_count integer not null default 0,
      provider varchar(20) not null,
      provider_group_id varchar(64),
      provider_status varchar(40),
      dispatch_attempts integer not null default 0,
      last_provider_error varchar(1000),
      next_attempt_at timestamptz not null default now(),
      claim_token uuid,
      claimed_until timestamptz,
      dispatched_at timestamptz,
      confirmed_at timestamptz,
      version integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (tenant_id, id),
      foreign key (tenant_id, sender_id) references users (tenant_id, id)
    )`.execute(db)
  await sql`create index sms_messages_history on sms_messages (tenant_id, created_at desc, id desc)`.execute(db)
  await sql`create index sms_messages_sender_history on sms_messages (tenant_id, sender_id, created_at desc, id desc)`.execute(db)
  await sql`create index sms_messages_due on sms_messages (tenant_id, next_attempt_at) where status = 'PENDING'`.execute(db)
  await sql`select svc_protect_tenant_table('sms_messages')`.execute(db)

  await sql`
    create table sms_recipients (
      tenant_id bigint not null,
      sms_id bigint not null,
      recipient_index integer not null,
      phone varchar(20) not null,
      name varchar(100),
      student_id bigint,
      class_name varchar(100),
      recipient_role varchar(20),
      delivery_status varchar(20) not null default 'PENDING'
        check (delivery_status in ('PENDING', 'DISPATCHED', 'DELIVERED', 'FAILED', 'CANCELLED')),
      provider_message_id varchar(64),
      provider_status_code varchar(10),
      provider_status_message varchar(200),
      reported_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (tenant_id, sms_id, recipient_index),
      foreign key (tenant_id, sms_id) references sms_messages (tenant_id, id) on delete cascade
    )`.execute(db)
  await sql`select svc_protect_tenant_table('sms_recipients')`.execute(db)

  // Owned by the academy's class module, which may have created them first: created and protected here only when
  // missing, so class sends (db/repos/sms/class-roster.ts) find them either way.
  await sql`
    create table if not exists classes (
      id bigint generated always as identity,
      tenant_id bigint not null references tenants (id),
      name varchar(100) not null,
      created_at timestamptz not null default now(),
      primary key (tenant_id, id)
    )`.execute(db)
  await sql`
    create table if not exists class_enrollments (
      id bigint generated always as identity,
      tenant_id bigint not null,
      class_id bigint not null,
      student_id bigint not null,
      guardian_phone varchar(20),
      status varchar(20) not null default 'ACTIVE',
      created_at timestamptz not null default now(),
      primary key (tenant_id, id),
      foreign key (tenant_id, class_id) references classes (tenant_id, id),
      foreign key (tenant_id, student_id) references users (tenant_id, id)
    )`.execute(db)
  await sql`create index if not exists class_enrollments_class on class_enrollments (tenant_id, class_id)`.execute(db)
  await sql`
    do $$
    begin
      if not (select relrowsecurity from pg_class where oid = 'classes'::regclass) then
        perform svc_protect_tenant_table('classes');
      end if;
      if not (select relrowsecurity from pg_class where oid = 'class_enrollments'::regclass) then
        perform svc_protect_tenant_table('class_enrollments');
      end if;
    end
    $$`.execute(db)

  // Idempotency keys of send, class send and group creation: scoped per (tenant, user, route); no bodies kept.
  await sql`
    create table idempotency_keys (
      tenant_id bigint not null references tenants (id),
      user_id bigint not null,
      route varchar(100) not null,
      key varchar(255) not null,
      fingerprint char(64) not null,
      state varchar(20) not null check (state in ('IN_PROGRESS', 'COMPLETED')),
      resource_id bigint,
      status_code integer,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      primary key (tenant_id, user_id, route, key)
    )`.execute(db)
  await sql`create index idempotency_keys_expiry on idempotency_keys (tenant_id, expires_at)`.execute(db)
  await sql`select svc_protect_tenant_table('idempotency_keys')`.execute(db)

  // Cross-tenant dispatch work is found through one function, svc_claim_due_sms, and the purge now also covers
  // expired idempotency keys (svc_purge_expired): both in db/functions.
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'sms_recipients',
    'sms_messages',
    'recipient_group_members',
    'recipient_groups',
    'sms_templates',
    'sms_sender_settings',
  ]) {
    await sql`drop table ${sql.table(table)}`.execute(db)
  }
}
