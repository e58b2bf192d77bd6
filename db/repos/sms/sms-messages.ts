import { sql, type Insertable, type Selectable, type SelectQueryBuilder } from 'kysely'
import { planOnce } from '../../driver/statement-flags.js'
import type { DB, SmsKind, SmsMessagesTable, SmsRecipientsTable, StoredRecipient } from '../../schema.js'
import type { TenantTx } from '../../tenant-transaction.js'
import { dispatchAllowed } from '../dispatch/dispatch-hold.js'
import { unnestedRecipients } from './unnested-recipients.js'

const COLUMNS = [
  'id',
  'senderId',
  'senderNumber',
  'recipientType',
  'recipientCount',
  'title',
  'recipientGroupId',
  'content',
  'templateId',
  'scheduledAt',
  'cancelledAt',
  'sentAt',
  'messageType',
  'estimatedSegments',
  'unitPrice',
  'totalPrice',
  'status',
  'successCount',
  'failCount',
  'purpose',
  'optedOutCount',
  'noConsentCount',
  'channel',
  'fallback',
  'kakaoTemplateId',
  'createdAt',
  'updatedAt',
] as const

/**
 * The public columns of a staff message; dispatch internals never leave the repository. Only STAFF messages are ever
 * read as records, and those always have a sender (a CHECK ties the sender to the kind).
 */
export type MessageRecord = Omit<Pick<Selectable<SmsMessagesTable>, (typeof COLUMNS)[number]>, 'senderId'> & { senderId: number }

/** The only kind staff ever read: a system message (a one-time code) is the service's own, not the tenant's. */
const STAFF: SmsKind = 'STAFF'

const RECIPIENT_COLUMNS = [
  'recipientIndex',
  'phone',
  'name',
  'studentId',
  'className',
  'recipientRole',
  'deliveryStatus',
  'deliveredVia',
] as const

export type RecipientRecord = Pick<Selectable<SmsRecipientsTable>, (typeof RECIPIENT_COLUMNS)[number]>

/**
 * What a send writes; the status, counts and times start from the table's defaults. An AlimTalk keeps, from its
 * acceptance, the channel and provider template the hand-over sends, and the request-wide variables.
 */
export type NewMessage = Pick<
  Selectable<SmsMessagesTable>,
  'tenantId' | 'provider' | 'adSenderName' | 'adOptOutNumber' | 'kakaoPfId' | 'kakaoProviderTemplateId' | 'kakaoVariables'
> &
  Omit<
    MessageRecord,
    'id' | 'cancelledAt' | 'sentAt' | 'status' | 'successCount' | 'failCount' | 'createdAt' | 'updatedAt'
  >

/** The message row is also the dispatch outbox: it is due at scheduledAt, or at once when not scheduled. */
export function insertMessage(trx: TenantTx, message: NewMessage): Promise<MessageRecord> {
  const { kakaoVariables, ...fields } = message
  return trx
    .insertInto('smsMessages')
    .values({
      ...fields,
      kakaoVariables: kakaoVariables === null ? null : JSON.stringify(kakaoVariables),
      nextAttemptAt: message.scheduledAt ?? sql<Date>`now()`,
      updatedAt: sql<Date>`now()`,
    })
    .returning(COLUMNS)
    .$narrowType<{ senderId: number }>()
    .executeTakeFirstOrThrow()
}

/** What a system message writes: no sender user, no template or group, never scheduled. */
export type NewSystemMessage = Pick<
  Insertable<SmsMessagesTable>,
  'tenantId' | 'senderNumber' | 'title' | 'content' | 'messageType' | 'unitPrice' | 'provider' | 'discardAfter'
> & { kind: Exclude<SmsKind, 'STAFF'>; phone: string }

/** A system message and its one recipient in one statement, due at once; returns the message id. */
export async function insertSystemMessage(trx: TenantTx, message: NewSystemMessage): Promise<number> {
  const { phone, ...fields } = message
  const inserted = await trx
    .with('message', (db) =>
      db
        .insertInto('smsMessages')
        .values({
          ...fields,
          recipientType: 'CUSTOM',
          recipientCount: 1,
          estimatedSegments: 1,
          totalPrice: fields.unitPrice,
          nextAttemptAt: sql<Date>`now()`,
          updatedAt: sql<Date>`now()`,
        })
        .returning(['tenantId', 'id']),
    )
    .insertInto('smsRecipients')
    .columns(['tenantId', 'smsId', 'recipientIndex', 'phone', 'updatedAt'])
    .expression((eb) =>
      eb
        .selectFrom('message')
        .select((inner) => ['tenantId', 'id', inner.lit(0).as('recipientIndex'), inner.val(phone).as('phone'), sql<Date>`now()`.as('updatedAt')]),
    )
    .returning('smsId')
    .executeTakeFirstOrThrow()
  return inserted.smsId
}

/** Why an advertisement's recipient is left out at acceptance: on the opt-out list, or without a live consent. */
export type LeftOutStatus = 'OPTED_OUT' | 'NO_CONSENT'

/**
 * Every recipient in one statement whatever their number (db/repos/sms/unnested-recipients.ts), PENDING, or the
 * status `leftOut` gives their phone (an advertisement's recipients on the opt-out list or without consent, never
 * sent). `variables`,
 * one per recipient in the same order, are an AlimTalk's values of each recipient (sms_recipients.variables).
 */
export async function insertRecipients(
  trx: TenantTx,
  tenantId: number,
  smsId: number,
  recipients: readonly StoredRecipient[],
  leftOut: ReadonlyMap<string, LeftOutStatus> = new Map(),
  variables?: readonly Record<string, string>[],
): Promise<void> {
  // The statuses travel as one more array beside the recipients: the left-out numbers matched in SQL would cost a
  // comparison per recipient and listed number.
  const statuses = leftOut.size === 0 ? undefined : recipients.map((recipient) => leftOut.get(recipient.phone) ?? 'PENDING')
  // The variables too, as one jsonb array (its elements taken with their ordinality): one parameter for all of them.
  const withVariables =
    variables === undefined
      ? sql``
      : sql`join jsonb_array_elements(${JSON.stringify(variables)}::jsonb) with ordinality as v (variables, ord) on v.ord = r.ord`
  await sql`
    insert into sms_recipients
      (tenant_id, sms_id, recipient_index, phone, name, student_id, class_name, recipient_role, delivery_status, variables, updated_at)
    select ${tenantId}, ${smsId}, r.ord - 1, r.phone, r.name, r.student_id, r.class_name, r.recipient_role,
           ${statuses === undefined ? sql`'PENDING'` : sql`r.delivery_status`},
           ${variables === undefined ? sql`null::jsonb` : sql`v.variables`}, now()
    from ${unnestedRecipients(recipients, statuses)} ${withVariables}`.execute(trx)
}

/** Who may see a message: everyone in the tenant, or (INSTRUCTOR) only its sender (docs/api.md#roles). */
export interface MessageScope {
  senderId?: number
}

function scoped<O>(query: SelectQueryBuilder<DB, 'smsMessages', O>, scope: MessageScope) {
  return scope.senderId === undefined ? query : query.where('senderId', '=', scope.senderId)
}

/** A staff message by id; a system message answers like a message of another tenant (undefined). */
export function findMessage(trx: TenantTx, id: number, scope: MessageScope): Promise<MessageRecord | undefined> {
  return scoped(trx.selectFrom('smsMessages').select(COLUMNS).where('id', '=', id).where('kind', '=', STAFF), scope)
    .$call(planOnce)
    .$narrowType<{ senderId: number }>()
    .executeTakeFirst()
}

export function listRecipients(trx: TenantTx, smsId: number): Promise<RecipientRecord[]> {
  return trx
    .selectFrom('smsRecipients')
    .select(RECIPIENT_COLUMNS)
    .where('smsId', '=', smsId)
    .orderBy('recipientIndex')
    .$call(planOnce)
    .execute()
}

/**
 * Cancels a PENDING staff message that no dispatcher holds a claim on, when it is scheduled in the future or the
 * dispatcher holds it back (db/repos/dispatch/dispatch-hold.ts: its tenant is not ACTIVE, or its sender number is no longer
 * the APPROVED one; or it is an advertisement and `advertisingOpen` is false, in the quiet hours) and it was never
 * handed to the provider (no attempt counted): a held message may stay PENDING for hours or indefinitely, so its
 * sender must be able to withdraw it whatever its scheduled time.
 * One conditional UPDATE, so it cannot race the dispatcher: the claim function locks due rows with FOR UPDATE SKIP
 * LOCKED and sets claimed_until. A row the dispatcher holds makes this statement wait and then re-check the
 * condition against the claimed row (which no longer matches); a row this transaction cancels is locked until
 * commit and then no longer PENDING, so the claim never takes it.
 */
export function cancelScheduledMessage(
  trx: TenantTx,
  id: number,
  scope: MessageScope,
  advertisingOpen = true,
): Promise<MessageRecord | undefined> {
  let query = trx
    .updateTable('smsMessages as m')
    .set((eb) => ({
      status: 'CANCELLED',
      cancelledAt: sql<Date>`now()`,
      version: eb('m.version', '+', 1),
      updatedAt: sql<Date>`now()`,
    }))
    .where('m.id', '=', id)
    .where('m.kind', '=', STAFF)
    .where('m.status', '=', 'PENDING')
    .where((eb) =>
      eb.or([
        eb('m.scheduledAt', '>', sql<Date>`now()`),
        // Staff messages only, so no system sender is exempt.
        eb.and([eb('m.dispatchAttempts', '=', 0), eb.not(dispatchAllowed(null))]),
        // An advertisement held by the quiet hours (`advertisingOpen` false: lib/advertising/quiet-hours.ts).
        ...(advertisingOpen ? [] : [eb.and([eb('m.dispatchAttempts', '=', 0), eb('m.purpose', '=', 'ADVERTISEMENT')])]),
      ]),
    )
    .where((eb) => eb.or([eb('m.claimedUntil', 'is', null), eb('m.claimedUntil', '<', sql<Date>`now()`)]))
  if (scope.senderId !== undefined) query = query.where('m.senderId', '=', scope.senderId)
  return query.returning(COLUMNS).$narrowType<{ senderId: number }>().executeTakeFirst()
}

/** Cancels the message's PENDING recipients; returns how many, which the daily quota gets back. */
export async function cancelPendingRecipients(trx: TenantTx, smsId: number): Promise<number> {
  const result = await trx
    .updateTable('smsRecipients')
    .set({ deliveryStatus: 'CANCELLED', updatedAt: sql<Date>`now()` })
    .where('smsId', '=', smsId)
    .where('deliveryStatus', '=', 'PENDING')
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/**
 * Whether a template exists in the tenant. A send only records which template its content came from (the
 * content is sent as given), but a reference to nothing is a client mistake worth refusing.
 */
export async function templateExists(trx: TenantTx, templateId: number): Promise<boolean> {
  const row = await trx.selectFrom('smsTemplates').select('id').where('id', '=', templateId).executeTakeFirst()
  return row !== undefined
}
