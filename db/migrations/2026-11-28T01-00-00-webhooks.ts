import { sql, type Kysely } from 'kysely'
import { defineFunction } from '../function-files.js'

// Frozen in time: literal names and values only, never app constants (SQL functions: db/functions).

// Delivery events pushed to the tenant's own systems (lib/webhooks, docs/api.md#events).
// - webhook_endpoints: at most one per tenant. The signing secret must be read back to sign, so a hash cannot serve:
//   it is sealed (AES-256-GCM under a key of the service, bound to the tenant), never stored in clear.
// - webhook_events: the outbox. A trigger on sms_messages writes an event in the transaction that moves a message to
//   SENT, FAILED, PARTIAL or CANCELLED, when the tenant's endpoint subscribes to it, so an event exists exactly when
//   its change committed. The deliverer claims due events across tenants with a lease (claim_token, claimed_until,
//   like dispatch); the body is fixed at creation, so every retry sends the same bytes under the same webhook-id.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      tenant_id bigint primary key references tenants (id),
      url varchar(2000) not null,
      events text[] not null,
      secret_sealed text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`select svc_protect_tenant_table('webhook_endpoints')`.execute(db)
  await sql`revoke truncate, references, trigger on webhook_endpoints from svc_app`.execute(db)

  await sql`
    create table webhook_events (
      tenant_id bigint not null references tenants (id),
      id bigint generated always as identity,
      webhook_id uuid not null default gen_random_uuid(),
      event_type varchar(40) not null,
      body text not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      claim_token uuid,
      claimed_until timestamptz,
      delivered_at timestamptz,
      given_up_at timestamptz,
      last_error varchar(500),
      created_at timestamptz not null default now(),
      primary key (tenant_id, id)
    )`.execute(db)
  // Only undelivered events: the claim's scan stays as small as the backlog however many were delivered.
  await sql`
    create index webhook_events_due on webhook_events (tenant_id, next_attempt_at)
      where delivered_at is null and given_up_at is null`.execute(db)
  await sql`select svc_protect_tenant_table('webhook_events')`.execute(db)
  await sql`revoke truncate, references, trigger on webhook_events from svc_app`.execute(db)

  await defineFunction(db, 'svc_webhook_event_of_sms')
  await sql`
    create trigger sms_messages_webhook_events after update of status on sms_messages
      for each row
      when (old.status is distinct from new.status and new.kind = 'STAFF'
            and new.status in ('SENT', 'FAILED', 'PARTIAL', 'CANCELLED'))
      execute function svc_webhook_event_of_sms()`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger sms_messages_webhook_events on sms_messages`.execute(db)
  await sql`drop function svc_webhook_event_of_sms()`.execute(db)
  await sql`drop table webhook_events`.execute(db)
  await sql`drop table webhook_endpoints`.execute(db)
}
