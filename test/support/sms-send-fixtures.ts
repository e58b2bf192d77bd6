import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { RegistrationStatus, SmsStatus } from '../../db/schema.js'
import { insertUser, owner, unique, type TenantRow } from './fixtures.js'
import type { Actor } from './staff-fixtures.js'

/** The live provider's settings, pointing at a closed loopback port: sends are only created, never dispatched. */
export const EXTSMS_ENV = {
  SVC_SMS_PROVIDER: 'extsms',
  SVC_SMS_EXTSMS_API_KEY: 'k',
  SVC_SMS_EXTSMS_API_SECRET: 's',
  SVC_SMS_EXTSMS_BASE_URL: 'http://127.0.0.1:9',
  SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 't',
}

export const newKey = (): string => randomUUID()

/** An ISO instant `minutes` from now (negative: in the past). */
export const minutesFromNow = (minutes: number): string => new Date(Date.now() + minutes * 60_000).toISOString()

/** `count` distinct valid mobile numbers, hyphenated as people type them (`010-0000-0001`, ...). */
export function phones(count: number, offset = 0): string[] {
  return Array.from({ length: count }, (_, index) => {
    const digits = String(100_000_000 + offset + index).slice(1)
    return `010-${digits.slice(0, 4)}-${digits.slice(4)}`
  })
}

export function recipients(count: number, extra: Record<string, unknown> = {}) {
  return phones(count).map((phone, index) => ({ phone, name: `Student ${index}`, ...extra }))
}

export function post(
  app: FastifyInstance,
  url: string,
  who: Actor | undefined,
  payload: unknown,
  key: string | null = newKey(),
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(who?.headers ?? {}) }
  if (key !== null) headers['idempotency-key'] = key
  return app.inject({ method: 'POST', url, headers, payload: payload as object })
}

export function send(app: FastifyInstance, who: Actor, payload: unknown, key?: string | null) {
  return post(app, '/v1/sms/send', who, payload, key)
}

export async function setSender(tenant: TenantRow, status: RegistrationStatus, senderNumber = '0212345678') {
  await owner()
    .insertInto('smsSenderSettings')
    .values({ tenantId: tenant.id, provider: 'extsms', senderNumber, registrationStatus: status, updatedAt: new Date() })
    .execute()
}

export async function createClass(tenant: TenantRow, name = unique('Class')) {
  return owner().insertInto('classes').values({ tenantId: tenant.id, name }).returning(['id', 'name']).executeTakeFirstOrThrow()
}

/** A student (with `name`) enrolled in the class; the guardian phone may be null or blank on purpose. */
export async function enrol(
  tenant: TenantRow,
  classId: number,
  options: { name?: string; guardianPhone?: string | null; status?: string } = {},
) {
  const student = await insertUser(tenant, { role: 'STUDENT' })
  const name = options.name ?? unique('Kim')
  await owner().updateTable('users').set({ name }).where('id', '=', student.id).execute()
  await owner()
    .insertInto('classEnrollments')
    .values({
      tenantId: tenant.id,
      classId,
      studentId: student.id,
      guardianPhone: options.guardianPhone === undefined ? '010-5555-0000' : options.guardianPhone,
      status: options.status ?? 'ACTIVE',
    })
    .execute()
  return { studentId: student.id, name }
}

export interface MessageFixture {
  status?: SmsStatus
  scheduledAt?: Date | null
  sentAt?: Date | null
  createdAt?: Date
  title?: string
  content?: string
  recipientType?: string
  claimedUntil?: Date | null
  recipientPhones?: string[]
}

/** A message written directly (as the dispatcher or an operator would leave it), with PENDING recipients. */
export async function insertMessageRow(sender: Actor, fixture: MessageFixture = {}): Promise<number> {
  const phonesOf = fixture.recipientPhones ?? ['01012345678']
  const row = await owner()
    .insertInto('smsMessages')
    .values({
      tenantId: sender.tenant.id,
      senderId: sender.user.id,
      senderNumber: null,
      recipientType: fixture.recipientType ?? 'CUSTOM',
      recipientCount: phonesOf.length,
      title: fixture.title ?? unique('title'),
      recipientGroupId: null,
      content: fixture.content ?? 'hello {name}',
      templateId: null,
      scheduledAt: fixture.scheduledAt ?? null,
      sentAt: fixture.sentAt ?? null,
      messageType: 'SMS',
      estimatedSegments: phonesOf.length,
      unitPrice: 20,
      totalPrice: 20 * phonesOf.length,
      status: fixture.status ?? 'PENDING',
      provider: 'mock',
      // Not due for a year unless scheduled: a running dispatcher must not move fixture rows under a test.
      nextAttemptAt: fixture.scheduledAt ?? new Date(Date.now() + 365 * 86_400_000),
      claimedUntil: fixture.claimedUntil ?? null,
      claimToken: fixture.claimedUntil ? randomUUID() : null,
      ...(fixture.createdAt ? { createdAt: fixture.createdAt } : {}),
      updatedAt: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  await owner()
    .insertInto('smsRecipients')
    .values(
      phonesOf.map((phone, index) => ({
        tenantId: sender.tenant.id,
        smsId: row.id,
        recipientIndex: index,
        phone,
        name: `R${index}`,
        studentId: null,
        className: null,
        recipientRole: null,
        updatedAt: new Date(),
      })),
    )
    .execute()
  return row.id
}

export async function messageRows(tenant: TenantRow) {
  return owner().selectFrom('smsMessages').selectAll().where('tenantId', '=', tenant.id).execute()
}

export async function recipientRows(tenant: TenantRow, smsId: number) {
  return owner()
    .selectFrom('smsRecipients')
    .selectAll()
    .where('tenantId', '=', tenant.id)
    .where('smsId', '=', smsId)
    .orderBy('recipientIndex')
    .execute()
}

export async function keyRows(tenant: TenantRow) {
  return owner().selectFrom('idempotencyKeys').selectAll().where('tenantId', '=', tenant.id).execute()
}

/** Backdates a message's schedule past now, as if its time had come while it waited. */
export async function backdateSchedule(tenant: TenantRow, smsId: number) {
  await owner()
    .updateTable('smsMessages')
    .set({ scheduledAt: sql<Date>`now() - interval '1 minute'` })
    .where('tenantId', '=', tenant.id)
    .where('id', '=', smsId)
    .execute()
}

export function problem(response: LightMyRequestResponse) {
  return { status: response.statusCode, code: (response.json() as { code?: string }).code }
}
