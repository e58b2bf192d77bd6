import { sql, type Kysely, type Selectable } from 'kysely'
import type { DB, DeliveryStatus, SmsKind, SmsMessagesTable, SmsPurpose, SmsStatus, TenantsTable } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import { dispatchAllowed } from './dispatch-hold.js'

export interface Claim {
  tenantId: number
  smsId: number
  claimToken: string
}

/**
 * Claims up to `batchSize` due messages across tenants for `leaseSeconds` (the dispatcher asks for as many as it
 * has free workers, so nothing claimed waits in memory), through the owner-privileged
 * svc_claim_due_sms function (FOR UPDATE SKIP LOCKED: concurrent instances never claim the same row). It returns
 * ids and tokens only; every read of message data happens later inside the message's tenant context. Held messages
 * (db/repos/dispatch/dispatch-hold.ts) are not claimed; `systemSender` is SVC_SMS_SYSTEM_SENDER. Advertisements are claimed
 * only when `advertisingOpen` (outside the quiet hours, lib/advertising/quiet-hours.ts).
 */
export async function claimDueMessages(
  db: Kysely<DB>,
  batchSize: number,
  leaseSeconds: number,
  systemSender: string | null = null,
  advertisingOpen = false,
): Promise<Claim[]> {
  const { rows } = await sql<Claim>`
    select tenant_id, sms_id, claim_token
    from svc_claim_due_sms(${batchSize}, ${leaseSeconds}, ${systemSender}::varchar, ${advertisingOpen}::boolean)`.execute(db)
  return rows
}

export type ClaimedMessage = Pick<
  Selectable<SmsMessagesTable>,
  | 'id'
  | 'kind'
  | 'senderNumber'
  | 'title'
  | 'content'
  | 'messageType'
  | 'dispatchAttempts'
  | 'purpose'
  | 'adSenderName'
  | 'adOptOutNumber'
  | 'createdAt'
  | 'openGroupId'
  | 'channel'
  | 'fallback'
  | 'kakaoPfId'
  | 'kakaoProviderTemplateId'
  | 'kakaoVariables'
> & { tenantSlug: TenantsTable['slug'] }

const CLAIMED_COLUMNS = [
  'm.id',
  'm.kind',
  'm.senderNumber',
  'm.title',
  'm.content',
  'm.messageType',
  'm.dispatchAttempts',
  'm.purpose',
  'm.adSenderName',
  'm.adOptOutNumber',
  'm.createdAt',
  'm.openGroupId',
  'm.channel',
  'm.fallback',
  'm.kakaoPfId',
  'm.kakaoProviderTemplateId',
  'm.kakaoVariables',
  't.slug as tenantSlug',
] as const

/** A claimed message that was not handed over: its attempts and whether it is past its discard_after. */
export interface UnsentClaim {
  dispatchAttempts: number
  discardAfter: Date | null
  /** Past discard_after by the database's clock, the one the hand-over judged by. */
  expired: boolean
  /** The group an earlier attempt left unresolved: read back before the message may end. */
  openGroupId: string | null
  kind: SmsKind
  tenantSlug: TenantsTable['slug']
}

/** The message if this claim still holds it (PENDING, same token, lease not expired), else undefined. */
export async function findClaimedMessage(trx: TenantTx, claim: Claim): Promise<UnsentClaim | undefined> {
  return trx
    .selectFrom('smsMessages as m')
    .innerJoin('tenants as t', 't.id', 'm.tenantId')
    .select([
      'm.dispatchAttempts',
      'm.discardAfter',
      'm.openGroupId',
      'm.kind',
      't.slug as tenantSlug',
      sql<boolean>`coalesce(m.discard_after <= now(), false)`.as('expired'),
    ])
    .where('m.id', '=', claim.smsId)
    .where('m.status', '=', 'PENDING')
    .where('m.claimToken', '=', claim.claimToken)
    .where('m.claimedUntil', '>', sql<Date>`now()`)
    .executeTakeFirst()
}

/**
 * The hand-over, in one statement: if this claim still holds the message (PENDING, same token, lease running, not
 * yet handed over, not past its discard_after) and it has attempts left, counts the attempt and marks it handed to
 * the provider, before the provider is called. An attempt whose process dies during the call still counts, so a
 * message that keeps killing its instance ends FAILED after `maxAttempts`. Returns the message with the attempt's
 * number in `dispatchAttempts`, or undefined (claim lost, attempts exhausted, expired, or the message is held:
 * db/repos/dispatch/dispatch-hold.ts; `systemSender` is SVC_SMS_SYSTEM_SENDER; or it is an advertisement and
 * `advertisingOpen` is false, the quiet hours having begun since the claim).
 */
export async function handOverClaimedMessage(
  trx: TenantTx,
  claim: Claim,
  maxAttempts: number,
  systemSender: string | null = null,
  advertisingOpen = false,
): Promise<ClaimedMessage | undefined> {
  const query = trx
    .updateTable('smsMessages as m')
    .from('tenants as t')
    .set((eb) => ({ dispatchAttempts: eb('m.dispatchAttempts', '+', 1), handedOverAt: sql<Date>`now()` }))
    .whereRef('t.id', '=', 'm.tenantId')
    .where('m.id', '=', claim.smsId)
    .where('m.status', '=', 'PENDING')
    .where('m.claimToken', '=', claim.claimToken)
    .where('m.claimedUntil', '>', sql<Date>`now()`)
    .where('m.handedOverAt', 'is', null)
    .where('m.dispatchAttempts', '<', maxAttempts)
    .where((eb) => eb.or([eb('m.discardAfter', 'is', null), eb('m.discardAfter', '>', sql<Date>`now()`)]))
    // The claim's hold rule again, for a tenant suspended or a sender number rejected or replaced since the claim.
    .where(dispatchAllowed(systemSender))
    .returning(CLAIMED_COLUMNS)
  return (advertisingOpen ? query : query.where('m.purpose', '<>', 'ADVERTISEMENT')).executeTakeFirst()
}

/**
 * An advertisement's recipients still to send whose number joined the tenant's opt-out list after the message
 * was accepted: marked OPTED_OUT (never sent), and the message's opted-out count, segments and price follow, in one
 * statement. Returns how many, which the daily quota gets back.
 */
export async function optOutListedRecipients(trx: TenantTx, smsId: number): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    with listed as (
      update sms_recipients r set delivery_status = 'OPTED_OUT', updated_at = now()
      from sms_opt_outs o
      where r.sms_id = ${smsId} and r.delivery_status = 'PENDING' and o.tenant_id = r.tenant_id and o.phone = r.phone
      returning r.recipient_index
    ), tally as (select count(*)::int as count from listed)
    update sms_messages m set
      opted_out_count = m.opted_out_count + tally.count,
      estimated_segments = m.estimated_segments - tally.count,
      total_price = m.total_price - tally.count * m.unit_price,
      updated_at = now()
    from tally
    where m.id = ${smsId} and tally.count > 0
    returning tally.count`.execute(trx)
  return rows[0]?.count ?? 0
}

/**
 * An advertisement's recipients still to send whose number has no consent confirmed after `liveAfter` (withdrawn,
 * lapsed, or never given, when the tenant requires consent): marked NO_CONSENT (never sent), and the message's
 * no-consent count, segments and price follow, in one statement. Run after the opt-out check, so a listed number
 * stays OPTED_OUT. Returns how many, which the daily quota gets back.
 */
export async function leaveOutUnconsentedRecipients(trx: TenantTx, smsId: number, liveAfter: Date): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    with unconsented as (
      update sms_recipients r set delivery_status = 'NO_CONSENT', updated_at = now()
      where r.sms_id = ${smsId} and r.delivery_status = 'PENDING'
        and not exists (select 1 from sms_ad_consents c
                        where c.tenant_id = r.tenant_id and c.phone = r.phone and c.confirmed_at > ${liveAfter})
      returning r.recipient_index
    ), tally as (select count(*)::int as count from unconsented)
    update sms_messages m set
      no_consent_count = m.no_consent_count + tally.count,
      estimated_segments = m.estimated_segments - tally.count,
      total_price = m.total_price - tally.count * m.unit_price,
      updated_at = now()
    from tally
    where m.id = ${smsId} and tally.count > 0
    returning tally.count`.execute(trx)
  return rows[0]?.count ?? 0
}

/**
 * Extends the lease of a claim this instance still holds (heartbeat while an attempt runs). Guarded by the token
 * only, not by the old lease: a lease that lapsed during a database outage is still ours until another instance
 * claims the message (which replaces the token). False when the claim was lost.
 */
export async function renewLease(trx: TenantTx, claim: Claim, leaseSeconds: number): Promise<boolean> {
  const result = await trx
    .updateTable('smsMessages')
    .set({ claimedUntil: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` })
    .where('id', '=', claim.smsId)
    .where('claimToken', '=', claim.claimToken)
    .where('status', '=', 'PENDING')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

export interface UnsentRecipient {
  recipientIndex: number
  phone: string
  name: string | null
  className: string | null
  /** An AlimTalk recipient's own values (defaults applied at acceptance); null for SMS. */
  variables: Record<string, string> | null
}

/** Recipients not yet handed to the provider: a recipient the provider accepted is never sent again. */
export function findUnsentRecipients(trx: TenantTx, smsId: number): Promise<UnsentRecipient[]> {
  return trx
    .selectFrom('smsRecipients')
    .select(['recipientIndex', 'phone', 'name', 'className', 'variables'])
    .where('smsId', '=', smsId)
    .where('deliveryStatus', '=', 'PENDING')
    .orderBy('recipientIndex')
    .execute()
}

/** A claim this transaction has locked, with what decides whether the message may be tried again. */
export interface OwnClaim {
  discardAfter: Date | null
  /** An advertisement's retry waits for the end of the quiet hours. */
  purpose: SmsPurpose
}

/**
 * Takes the message back from the claim holder: returns undefined (and changes nothing) when the claim was lost,
 * e.g. the lease expired and another instance reclaimed it. Every result write starts here.
 */
export async function lockOwnClaim(trx: TenantTx, claim: Claim): Promise<OwnClaim | undefined> {
  return trx
    .selectFrom('smsMessages')
    .select(['discardAfter', 'purpose'])
    .where('id', '=', claim.smsId)
    .where('claimToken', '=', claim.claimToken)
    .where('status', '=', 'PENDING')
    .forUpdate()
    .executeTakeFirst()
}

export interface RecipientOutcome {
  recipientIndex: number
  status: Extract<DeliveryStatus, 'DISPATCHED' | 'DELIVERED' | 'FAILED'>
  providerMessageId: string | null
  /** The group of the provider call that answered for this recipient. */
  providerGroupId: string | null
  statusCode: string | null
  statusMessage: string | null
}

/**
 * Writes the provider's per-recipient answer in one statement. Only PENDING recipients change status, so a
 * delivery report that arrived before this write (the provider can be that fast) is never overwritten.
 */
export async function recordRecipientOutcomes(trx: TenantTx, smsId: number, outcomes: RecipientOutcome[]): Promise<void> {
  if (outcomes.length === 0) return
  await sql`
    update sms_recipients r set
      delivery_status = case when r.delivery_status = 'PENDING' then o.status else r.delivery_status end,
      provider_message_id = coalesce(r.provider_message_id, o.message_id),
      provider_group_id = coalesce(r.provider_group_id, o.group_id),
      provider_status_code = coalesce(r.provider_status_code, o.status_code),
      provider_status_message = coalesce(r.provider_status_message, o.status_message),
      updated_at = now()
    from unnest(${outcomes.map((o) => o.recipientIndex)}::int[], ${outcomes.map((o) => o.status)}::text[],
                ${outcomes.map((o) => o.providerMessageId)}::text[], ${outcomes.map((o) => o.providerGroupId)}::text[],
                ${outcomes.map((o) => o.statusCode)}::text[], ${outcomes.map((o) => o.statusMessage)}::text[])
      as o(recipient_index, status, message_id, group_id, status_code, status_message)
    where r.sms_id = ${smsId} and r.recipient_index = o.recipient_index`.execute(trx)
}

/** Fails every recipient still PENDING (refused as a whole, or retries exhausted). */
export async function failPendingRecipients(trx: TenantTx, smsId: number, reason: string): Promise<void> {
  await trx
    .updateTable('smsRecipients')
    .set({ deliveryStatus: 'FAILED', providerStatusMessage: reason.slice(0, 200), updatedAt: new Date() })
    .where('smsId', '=', smsId)
    .where('deliveryStatus', '=', 'PENDING')
    .execute()
}

export interface RecipientTally {
  pending: number
  dispatched: number
  delivered: number
  failed: number
}

export async function tallyRecipients(trx: TenantTx, smsId: number): Promise<RecipientTally> {
  const row = await trx
    .selectFrom('smsRecipients')
    .select((eb) => [
      eb.fn.countAll<number>().filterWhere('deliveryStatus', '=', 'PENDING').as('pending'),
      eb.fn.countAll<number>().filterWhere('deliveryStatus', '=', 'DISPATCHED').as('dispatched'),
      eb.fn.countAll<number>().filterWhere('deliveryStatus', '=', 'DELIVERED').as('delivered'),
      eb.fn.countAll<number>().filterWhere('deliveryStatus', '=', 'FAILED').as('failed'),
    ])
    .where('smsId', '=', smsId)
    .executeTakeFirstOrThrow()
  return row
}

export interface DispatchUpdate {
  status: SmsStatus
  /** The group left unresolved for the next holder, or null once the attempt's outcome is known. */
  openGroupId: string | null
  providerGroupId?: string | null
  lastProviderError?: string | null
  nextAttemptAt?: Date
  sentAt?: Date
  successCount?: number
  failCount?: number
  confirmed?: boolean
}

/**
 * Ends this claim: writes the attempt's outcome and releases the token and lease (the attempt was counted at
 * hand-over). A system message that leaves PENDING loses its text: the provider has it, or it will never be sent,
 * and a one-time code must not be recoverable from the database. A retry keeps it, since it sends it again.
 */
export async function finishAttempt(trx: TenantTx, claim: Claim, update: DispatchUpdate): Promise<void> {
  const now = new Date()
  await trx
    .updateTable('smsMessages')
    .set((eb) => ({
      status: update.status,
      ...(update.status !== 'PENDING' ? { content: sql<string>`case when kind = 'STAFF' then content else '' end` } : {}),
      claimToken: null,
      claimedUntil: null,
      handedOverAt: null,
      openGroupId: update.openGroupId,
      dispatchedAt: now,
      updatedAt: now,
      version: eb('version', '+', 1),
      ...(update.providerGroupId ? { providerGroupId: eb.fn.coalesce('providerGroupId', eb.val(update.providerGroupId)) } : {}),
      ...(update.lastProviderError !== undefined ? { lastProviderError: update.lastProviderError?.slice(0, 1000) ?? null } : {}),
      ...(update.nextAttemptAt ? { nextAttemptAt: update.nextAttemptAt } : {}),
      ...(update.sentAt ? { sentAt: eb.fn.coalesce('sentAt', eb.val(update.sentAt)) } : {}),
      ...(update.successCount !== undefined ? { successCount: update.successCount } : {}),
      ...(update.failCount !== undefined ? { failCount: update.failCount } : {}),
      ...(update.confirmed ? { confirmedAt: now } : {}),
    }))
    .where('id', '=', claim.smsId)
    .where('claimToken', '=', claim.claimToken)
    .execute()
}

/**
 * Records the group this claim's attempt is about to add messages to, with outcomes already known of a group read
 * back, before any message can go out through it. False (nothing written) when the claim was lost.
 */
export async function recordOpenGroup(trx: TenantTx, claim: Claim, groupId: string): Promise<boolean> {
  const result = await trx
    .updateTable('smsMessages')
    .set({ openGroupId: groupId })
    .where('id', '=', claim.smsId)
    .where('claimToken', '=', claim.claimToken)
    .where('status', '=', 'PENDING')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Gives a claim back untouched (shutdown before the provider was called). Never one that was handed over: its
 * answer must be recorded, or its lease must run out, so the attempt is never lost or repeated uncounted.
 */
export async function releaseClaim(trx: TenantTx, claim: Claim): Promise<void> {
  await trx
    .updateTable('smsMessages')
    .set({ claimToken: null, claimedUntil: null })
    .where('id', '=', claim.smsId)
    .where('claimToken', '=', claim.claimToken)
    .where('handedOverAt', 'is', null)
    .execute()
}
