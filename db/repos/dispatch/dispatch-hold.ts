import { sql, type RawBuilder } from 'kysely'

/**
 * The dispatcher's hold rule for one message, over a row of sms_messages aliased `m`; svc_claim_due_sms encodes
 * the same rule for the claim. A message is held (stays PENDING, is not handed to the provider) while its tenant
 * is not ACTIVE, or while it is a live-provider message whose stored sender number is not the tenant's current
 * APPROVED one: every tenant sends through one provider account, so a number rejected or replaced after the message
 * was stored must never reach the provider. A system message from `systemSender` (SVC_SMS_SYSTEM_SENDER, the
 * service's own number) does not depend on the tenant's number.
 */
export function dispatchAllowed(systemSender: string | null): RawBuilder<boolean> {
  return sql<boolean>`(
    exists (select 1 from tenants t where t.id = m.tenant_id and t.status = 'ACTIVE')
    and (m.provider <> 'extsms'
      or (m.kind <> 'STAFF' and m.sender_number = ${systemSender}::varchar)
      or exists (
        select 1 from sms_sender_settings s
        where s.tenant_id = m.tenant_id and s.provider = 'extsms' and s.registration_status = 'APPROVED'
          and s.sender_number = m.sender_number)))`
}
