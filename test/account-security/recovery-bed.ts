import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { randomBytes, randomInt, randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { DB, OneTimeCodePurpose, Role, TenantStatus, UserStatus } from '../../db/schema.js'
import { hashPassword } from '../../lib/sign-in/password-hash.js'
import { issueTokenPair } from '../../lib/sign-in/tokens.js'
import { normalizePhone } from '../../lib/sms/phone.js'
import { fakeExtSmsCredentials, useProviderTestBed, type ProviderTestBed } from '../dispatch/dispatch-test-bed.js'
import { strongPassword } from '../support/auth-fixtures.js'
import type { FakeSentMessage } from '../support/fakes/extsms-server.js'
import { buildTestApp, useTestApp } from '../support/helper.js'

/** The number the service's own messages come from in these tests (SVC_SMS_SYSTEM_SENDER). */
export const SYSTEM_SENDER = '15881234'

export interface RecoveryBed {
  /** The production app on the live provider adapter, sending to the fake; dispatch only by `sendQueued`. */
  app: FastifyInstance
  /** The file's own database as its owner (RLS bypassed), for fixtures and for looking behind the API. */
  owner: Kysely<DB>
  provider: ProviderTestBed
  /** Every log line the app wrote, as JSON text. */
  logLines: string[]
}

/**
 * A database of the file's own (the dispatcher claims due messages of every tenant, and the per-number counters count
 * across tenants), the loopback fake of the live provider, and the app sending to it. Codes are read where a user
 * reads them: in the text the provider was handed (`codeSentTo`).
 */
export function useRecoveryBed(overrides: Record<string, string> = {}): RecoveryBed {
  const provider = useProviderTestBed()
  const logLines: string[] = []
  const app = useTestApp(() => ({
    env: {
      DATABASE_URL: provider.iso.url,
      LOG_LEVEL: 'trace',
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: provider.fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'recovery-webhook',
      SVC_SMS_SYSTEM_SENDER: SYSTEM_SENDER,
      ...overrides,
    },
    onLine: (line) => logLines.push(line),
  }))
  return {
    get app() {
      return app.current
    },
    get owner() {
      return provider.iso.owner
    },
    provider,
    logLines,
  }
}

/** A valid mobile number (in the numbering plan's assigned ranges) no other test of the run uses. */
export function uniquePhone(): string {
  for (;;) {
    const digits = `010${randomInt(2000, 10_000)}${String(randomInt(0, 10_000)).padStart(4, '0')}`
    if (normalizePhone(digits) === digits) return digits
  }
}

export interface Academy {
  id: number
  slug: string
  customId: string
  name: string
}

export async function createAcademy(owner: Kysely<DB>, options: { status?: TenantStatus } = {}): Promise<Academy> {
  const suffix = randomBytes(5).toString('hex')
  return owner
    .insertInto('tenants')
    .values({
      slug: `r-${suffix}`,
      customId: suffix.toUpperCase(),
      // Letters only: no run of six digits that a test could mistake for a code.
      name: `Academy ${suffix.replace(/[0-9]/g, 'x')}`,
      status: options.status ?? 'ACTIVE',
      updatedAt: new Date(),
    })
    .returning(['id', 'slug', 'customId', 'name'])
    .executeTakeFirstOrThrow()
}

export interface Member {
  id: number
  tenantId: number
  userLoginId: string
  password: string
  phone: string | null
}

/** A user with a real bcrypt hash (so it can sign in), a phone, verified unless said otherwise. */
export async function insertMember(
  owner: Kysely<DB>,
  tenant: { id: number },
  options: { role?: Role; status?: UserStatus; phone?: string | null; verified?: boolean; loginId?: string } = {},
): Promise<Member> {
  const password = strongPassword()
  const phone = options.phone === undefined ? uniquePhone() : options.phone
  const row = await owner
    .insertInto('users')
    .values({
      tenantId: tenant.id,
      userLoginId: options.loginId ?? `member-${randomBytes(5).toString('hex')}`,
      passwordHash: await hashPassword(password, 4),
      name: 'Member',
      phone,
      phoneVerifiedAt: phone !== null && options.verified !== false ? new Date() : null,
      role: options.role ?? 'STUDENT',
      status: options.status ?? 'ACTIVE',
      avatarSeed: 'seed',
      updatedAt: new Date(),
    })
    .returning(['id', 'tenantId', 'userLoginId', 'phone'])
    .executeTakeFirstOrThrow()
  return { ...row, password }
}

/** `authorization: Bearer <access token>` for the member, as real as a login's (no session row needed). */
export async function bearerFor(app: FastifyInstance, member: Member, tenant: Academy, role: Role = 'STUDENT') {
  const { access } = await issueTokenPair(
    app.tokenKeys,
    { userId: member.id, tenantId: tenant.id, tenantSlug: tenant.slug, role, sid: randomUUID() },
    { accessSeconds: 600, refreshSeconds: 1200 },
  )
  return { authorization: `Bearer ${access.token}` }
}

/** The six digits of a code text, found after its label, never in a timestamp or an id. */
export function codeIn(text: string): string {
  const match = /인증번호 ([0-9]{6}) /.exec(text)
  if (!match) throw new Error('no code in the text')
  return match[1]!
}

/**
 * Lets the answered password-reset requests finish their work (it runs after the answer), hands every queued message
 * to the fake, then returns what the fake received for `phone`, oldest first.
 */
export async function sentTo(bed: RecoveryBed, phone: string): Promise<FakeSentMessage[]> {
  await bed.app.passwordRecovery.settled()
  while ((await bed.app.dispatcher.runOnce()) > 0);
  return bed.provider.fake.sentMessages.filter((message) => message.to === phone)
}

/** The code of the last SMS `phone` received; fails the test when none arrived. */
export async function codeSentTo(bed: RecoveryBed, phone: string): Promise<string> {
  const sent = await sentTo(bed, phone)
  expect(sent.length, `an SMS to ${phone}`).toBeGreaterThan(0)
  return codeIn(sent.at(-1)!.text)
}

/** The code row as stored (owner view), or undefined. */
export function storedCode(owner: Kysely<DB>, userId: number, purpose: OneTimeCodePurpose) {
  return owner.selectFrom('oneTimeCodes').selectAll().where('userId', '=', userId).where('purpose', '=', purpose).executeTakeFirst()
}

/** A code that is not `code`: the same six digits shifted by one. */
export function otherCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0')
}

/**
 * The app on the bed's database with the live provider and no system sender: the academy's own APPROVED number
 * would be used, and a new academy has none (SENDER_SETTING_NOT_APPROVED). The provider is never reached.
 */
export function buildAppWithoutSender(bed: RecoveryBed): Promise<FastifyInstance> {
  return buildTestApp({
    DATABASE_URL: bed.provider.iso.url,
    SVC_SMS_PROVIDER: 'extsms',
    SVC_SMS_EXTSMS_API_KEY: 'k',
    SVC_SMS_EXTSMS_API_SECRET: 's',
    SVC_SMS_EXTSMS_BASE_URL: 'http://127.0.0.1:9',
    SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 't',
  })
}
