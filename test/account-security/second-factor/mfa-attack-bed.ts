import type { FastifyInstance } from 'fastify'
import { sql, type Kysely, type Transaction } from 'kysely'
import { expect } from 'vitest'
import type { DB, Role } from '../../../db/schema.js'
import { ACCESS_COOKIE } from '../../../lib/sign-in/cookies.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import { expectProblem, until } from '../../support/auth-fixtures.js'
import { bearerFor, createAcademy, insertMember, type Academy, type Member, type RecoveryBed } from '../recovery-bed.js'
import { enrolTotp, mfaCall, type Response } from './mfa-bed.js'

/**
 * What the attack tests of the second factor (mfa-attacks-*.test.ts) share: members with a factor, what the database
 * holds for them, and a lock holder on the bed's own database that lines concurrent second steps up.
 */

export interface FactorMember {
  tenant: Academy
  member: Member
  /** A bearer token of the member (no session row), for /v1/me/mfa. */
  bearer: Record<string, string>
}

export interface TotpMember extends FactorMember {
  secret: string
  recoveryCodes: string[]
}

/** A member of a new academy (or of `tenant`) with TOTP enrolled and confirmed through the API. */
export async function totpMember(bed: RecoveryBed, options: { tenant?: Academy; role?: Role } = {}): Promise<TotpMember> {
  const tenant = options.tenant ?? (await createAcademy(bed.owner))
  const role = options.role ?? 'OWNER'
  const member = await insertMember(bed.owner, tenant, { role })
  const bearer = await bearerFor(bed.app, member, tenant, role)
  return { tenant, member, bearer, ...(await enrolTotp(bed.app, bearer, member.password)) }
}

/** Turns on the SMS factor of a member with a verified phone. */
export async function enableSms(app: FastifyInstance, factor: FactorMember): Promise<void> {
  const enabled = await mfaCall(app, factor.bearer, '/sms', { password: factor.member.password })
  expect(enabled.statusCode, enabled.body).toBe(204)
}

/** A member whose only factor is SMS to the verified phone. */
export async function smsMember(bed: RecoveryBed): Promise<FactorMember> {
  const tenant = await createAcademy(bed.owner)
  const member = await insertMember(bed.owner, tenant, { role: 'MANAGER' })
  const factor = { tenant, member, bearer: await bearerFor(bed.app, member, tenant, 'MANAGER') }
  await enableSms(bed.app, factor)
  return factor
}

/** The `svc_access_token` cookie carrying the member's bearer token, as a browser would send it. */
export const accessCookie = (bearer: Record<string, string>) => ({ [ACCESS_COOKIE]: bearer.authorization!.replace(/^Bearer /, '') })

/** AUTH_018 with a Retry-After within the default lock period. */
export function expectLocked(response: Response): void {
  expectProblem(response, 429, 'AUTH_018')
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1)
}

export function sessionsOf(owner: Kysely<DB>, userId: number) {
  return owner.selectFrom('sessions').select(['sid', 'deviceCategory']).where('userId', '=', userId).execute()
}

/** The user's login-failure counter as stored, or undefined when the user has none. */
export function failuresOf(owner: Kysely<DB>, userId: number) {
  return owner.selectFrom('userLoginFailures').select(['failures', 'lockedUntil']).where('userId', '=', userId).executeTakeFirst()
}

/** Takes row locks in the owner's transaction (`select ... for update`). */
export type RowLock = (trx: Transaction<DB>) => Promise<unknown>

/** A transaction of the owner's on the bed's database that keeps the locks `lock` took until `release`. */
export async function holdRows(owner: Kysely<DB>, lock: RowLock) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => (locked = resolve))
  const holder = owner.transaction().execute(async (trx) => {
    await lock(trx)
    locked()
    await released
  })
  await Promise.race([isLocked, holder.then(() => Promise.reject(new Error('the lock holder ended before holding its locks')))])
  return { release: () => (release(), holder) }
}

/**
 * Waits until `count` sessions of the bed's database wait for a row lock. The database is the file's own and its
 * tests run one after another, so they are this test's requests.
 */
export async function untilWaitingForLocks(owner: Kysely<DB>, count: number): Promise<void> {
  await until(async () => {
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`.execute(owner)
    return rows[0]!.waiting >= count
  }, 10_000)
}

/** A well-formed recovery code that is nobody's (the alphabet has no 0, 1, l or o). */
export const NOBODYS_RECOVERY_CODE = 'zzzzz-zzzzz'
