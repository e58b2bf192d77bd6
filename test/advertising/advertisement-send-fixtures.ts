import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll } from 'vitest'
import { owner } from '../support/fixtures.js'
import { buildTestApp } from '../support/helper.js'
import { OPT_OUT_DIGITS } from './advertising-fixtures.js'

/**
 * Carrier bytes by the documented rule (docs/api.md#message-type-and-price): ASCII 1, any other character 2, an
 * emoji included. Written out again here, not imported, so a test checks the service against the rule itself.
 */
export function carrierBytes(text: string): number {
  let bytes = 0
  for (const char of text) bytes += char.codePointAt(0)! <= 0x7f ? 1 : 2
  return bytes
}

/** An advertisement's text by the documented rule (docs/api.md#advertising), written out again for the same reason. */
export function framedText(senderName: string, content: string, optOutDigits = OPT_OUT_DIGITS): string {
  return `(광고)${senderName}\n${content}\n무료거부 ${optOutDigits}`
}

/** The instant a Seoul wall clock shows `wallClock` ('2026-03-10T20:59:59'): UTC+9 all year, no daylight saving. */
export function seoul(wallClock: string): Date {
  return new Date(`${wallClock}+09:00`)
}

/** Today's date on a Seoul wall clock (by the real clock), `days` later: 'YYYY-MM-DD'. */
export function seoulDate(days = 0): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Seoul' }).format(new Date(Date.now() + days * 86_400_000))
}

/**
 * The production app on a clock that stands still at `start` until a test moves it (`setTime`): the quiet hours are
 * judged by it, so a test decides the time of day instead of depending on when it runs. One app per file and
 * setting; tests in a file run one after another, so each sets the time it needs before it sends.
 */
export function useAppAt(start: Date, overrides: Record<string, string | undefined> = {}) {
  let now = start
  const holder = {
    current: undefined as unknown as FastifyInstance,
    setTime(at: Date) {
      now = at
    },
  }
  beforeAll(async () => {
    holder.current = await buildTestApp(overrides, () => new Date(now.getTime()))
  })
  afterAll(async () => {
    await holder.current?.close()
  })
  return holder
}

/** Renames the academy, as an operator would (there is no API for it). */
export async function renameTenant(tenantId: number, name: string): Promise<void> {
  await owner().updateTable('tenants').set({ name }).where('id', '=', tenantId).execute()
}

/** Recipients the academy's daily quota has counted, over every day it has a counter for. */
export async function quotaCounted(tenantId: number): Promise<number> {
  const { rows } = await sql<{ recipients: number }>`
    select coalesce(sum(recipients), 0)::int as recipients from sms_daily_usage where tenant_id = ${tenantId}`.execute(owner())
  return rows[0]!.recipients
}

/**
 * Everything an accepted send leaves behind, counted for one academy: a refused send must leave it unchanged
 * (no message, recipient, idempotency key, SMS_ACCEPTED event or quota).
 */
export async function footprint(tenantId: number) {
  const count = (table: 'smsMessages' | 'smsRecipients' | 'idempotencyKeys') =>
    owner()
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('tenantId', '=', tenantId)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n))
  const accepted = await owner()
    .selectFrom('auditEvents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('tenantId', '=', tenantId)
    .where('type', '=', 'SMS_ACCEPTED')
    .executeTakeFirstOrThrow()
  return {
    messages: await count('smsMessages'),
    recipients: await count('smsRecipients'),
    idempotencyKeys: await count('idempotencyKeys'),
    acceptedEvents: Number(accepted.n),
    quota: await quotaCounted(tenantId),
  }
}
