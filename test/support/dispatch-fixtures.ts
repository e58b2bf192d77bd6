import { sql, type Kysely } from 'kysely'
import { randomBytes } from 'node:crypto'
import type { DB } from '../../db/schema.js'

export async function insertTenantAndSender(owner: Kysely<DB>) {
  const slug = `t-${randomBytes(5).toString('hex')}`
  const tenant = await owner
    .insertInto('tenants')
    .values({ slug, customId: slug.slice(2, 12).toUpperCase(), name: slug, updatedAt: new Date() })
    .returning(['id', 'slug'])
    .executeTakeFirstOrThrow()
  const sender = await owner
    .insertInto('users')
    .values({
      tenantId: tenant.id,
      userLoginId: `staff-${slug}`,
      passwordHash: 'x',
      name: 'Staff',
      role: 'MANAGER',
      avatarSeed: 'seed',
      updatedAt: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  // The live provider sends only for an APPROVED sender (otherwise its messages are held).
  await owner
    .insertInto('smsSenderSettings')
    .values({ tenantId: tenant.id, provider: 'extsms', senderNumber: '0212345678', registrationStatus: 'APPROVED', updatedAt: new Date() })
    .execute()
  return { tenantId: tenant.id, slug: tenant.slug, senderId: sender.id }
}

export interface MessageSpec {
  tenantId: number
  senderId: number
  recipients?: { phone: string; name?: string; className?: string }[]
  content?: string
  title?: string
  messageType?: 'SMS' | 'LMS'
  /** When due; default now (an immediate send). */
  nextAttemptAt?: Date
  scheduledAt?: Date | null
}

/** A PENDING message with its recipients, as a committed send leaves it. */
export async function insertPendingMessage(owner: Kysely<DB>, spec: MessageSpec): Promise<number> {
  const recipients = spec.recipients ?? [
    { phone: '01012345678', name: 'Kim' },
    { phone: '01098765432', name: 'Lee' },
  ]
  const message = await owner
    .insertInto('smsMessages')
    .values({
      tenantId: spec.tenantId,
      senderId: spec.senderId,
      senderNumber: '0212345678',
      recipientType: 'GUARDIAN',
      recipientCount: recipients.length,
      title: spec.title ?? 'Notice',
      content: spec.content ?? 'Hello {name}',
      messageType: spec.messageType ?? 'SMS',
      estimatedSegments: recipients.length,
      unitPrice: 20,
      totalPrice: 20 * recipients.length,
      provider: 'extsms',
      scheduledAt: spec.scheduledAt ?? null,
      nextAttemptAt: spec.nextAttemptAt ?? new Date(),
      updatedAt: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await owner
    .insertInto('smsRecipients')
    .values(
      recipients.map((recipient, index) => ({
        tenantId: spec.tenantId,
        smsId: message.id,
        recipientIndex: index,
        phone: recipient.phone,
        name: recipient.name ?? null,
        studentId: null,
        className: recipient.className ?? null,
        recipientRole: 'GUARDIAN',
        updatedAt: new Date(),
      })),
    )
    .execute()
  return message.id
}

export async function messageState(owner: Kysely<DB>, smsId: number) {
  const message = await owner
    .selectFrom('smsMessages')
    .select(['status', 'dispatchAttempts', 'lastProviderError', 'providerGroupId', 'successCount', 'failCount', 'claimToken', 'nextAttemptAt', 'sentAt'])
    .where('id', '=', smsId)
    .executeTakeFirstOrThrow()
  const recipients = await owner
    .selectFrom('smsRecipients')
    .select(['recipientIndex', 'deliveryStatus', 'providerMessageId', 'providerStatusCode'])
    .where('smsId', '=', smsId)
    .orderBy('recipientIndex')
    .execute()
  return { ...message, recipients }
}

/** `count` one-recipient PENDING messages due now, inserted set-based; returns their ids. */
export async function insertManyPendingMessages(
  owner: Kysely<DB>,
  tenant: { tenantId: number; senderId: number },
  count: number,
): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    with created as (
      insert into sms_messages (tenant_id, sender_id, sender_number, recipient_type, recipient_count, title, content,
                                message_type, estimated_segments, unit_price, total_price, provider, next_attempt_at)
      select ${tenant.tenantId}, ${tenant.senderId}, '0212345678', 'GUARDIAN', 1, 'Notice', 'Hello {name}',
             'SMS', 1, 20, 20, 'extsms', now()
      from generate_series(1, ${count})
      returning id
    ), recipients as (
      insert into sms_recipients (tenant_id, sms_id, recipient_index, phone, name, recipient_role)
      select ${tenant.tenantId}, id, 0, '01012345678', 'n' || id, 'GUARDIAN' from created
    )
    select id from created order by id`.execute(owner)
  return rows.map((row) => row.id)
}

export interface AlimtalkSpec {
  pfId?: string
  providerTemplateId?: string
  /** The template's content as acceptance froze it, `#{name}` placeholders unrendered. */
  content: string
  fallback?: 'SMS' | 'NONE'
  /** The request-wide values. */
  variables?: Record<string, string>
  /** Each recipient's own values (defaults applied), by recipient index. */
  recipients: { phone: string; variables: Record<string, string> }[]
  /** The fallback's type, had it to go as SMS or LMS (acceptance sizes it). */
  messageType?: 'SMS' | 'LMS'
}

/** SVC_SMS_PRICE_ALIMTALK's default: an AlimTalk message's price per recipient at acceptance. */
export const ALIMTALK_PRICE = 13

/** A PENDING AlimTalk message as a committed send with channel ALIMTALK leaves it, priced per recipient at 13. */
export async function insertPendingAlimtalk(
  owner: Kysely<DB>,
  tenant: { tenantId: number; senderId: number },
  spec: AlimtalkSpec,
): Promise<number> {
  const smsId = await insertPendingMessage(owner, {
    ...tenant,
    recipients: spec.recipients.map(({ phone }) => ({ phone })),
    content: spec.content,
    messageType: spec.messageType ?? 'SMS',
  })
  await owner
    .updateTable('smsMessages')
    .set({
      channel: 'ALIMTALK',
      fallback: spec.fallback ?? 'SMS',
      kakaoTemplateId: 1,
      kakaoPfId: spec.pfId ?? 'KA01PF',
      kakaoProviderTemplateId: spec.providerTemplateId ?? 'KA01TP',
      kakaoVariables: JSON.stringify(spec.variables ?? {}),
      unitPrice: ALIMTALK_PRICE,
      totalPrice: ALIMTALK_PRICE * spec.recipients.length,
    })
    .where('id', '=', smsId)
    .execute()
  for (const [index, recipient] of spec.recipients.entries()) {
    await owner
      .updateTable('smsRecipients')
      .set({ variables: JSON.stringify(recipient.variables) })
      .where('smsId', '=', smsId)
      .where('recipientIndex', '=', index)
      .execute()
  }
  return smsId
}
