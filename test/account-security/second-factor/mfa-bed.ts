import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import { expect } from 'vitest'
import type { DB } from '../../../db/schema.js'
import { MFA_COOKIE } from '../../../lib/account-security/second-factor/mfa-token.js'
import { totpCode } from '../../../lib/account-security/second-factor/totp.js'
import type { Academy, Member } from '../recovery-bed.js'

/**
 * Helpers for the second factor's tests, over the API as a client uses it: the password step, the second step, and
 * enrolment. Codes come from the authenticator app's side (lib/account-security/second-factor/totp.ts's `totpCode`, as an app computes them), or
 * from the SMS the fake provider received (test/account-security/recovery-bed.ts).
 */

export type Response = LightMyRequestResponse

export const cookieOf = (response: Response, name: string) => response.cookies.find((cookie) => cookie.name === name)

/** The mfa cookie's value a password step set; fails the test when it set none. */
export function mfaCookieOf(response: Response): string {
  const cookie = cookieOf(response, MFA_COOKIE)
  expect(cookie?.value, 'an mfa cookie').toBeTruthy()
  return cookie!.value
}

export function passwordStep(app: FastifyInstance, member: Pick<Member, 'userLoginId' | 'password'>, tenant: Pick<Academy, 'customId'>, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/v1/login',
    headers,
    payload: { userLoginId: member.userLoginId, password: member.password, customId: tenant.customId },
  })
}

export function secondStep(app: FastifyInstance, cookie: string | undefined, method: string, code: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/v1/login/mfa',
    headers,
    ...(cookie === undefined ? {} : { cookies: { [MFA_COOKIE]: cookie } }),
    payload: { method, code },
  })
}

export function sendLoginCode(app: FastifyInstance, cookie: string | undefined, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/v1/login/mfa/sms', headers, ...(cookie === undefined ? {} : { cookies: { [MFA_COOKIE]: cookie } }) })
}

/** A POST under /v1/me/mfa with the member's bearer token. */
export function mfaCall(app: FastifyInstance, bearer: Record<string, string>, path: string, payload: object = {}) {
  return app.inject({ method: 'POST', url: `/v1/me/mfa${path}`, headers: bearer, payload })
}

export interface TotpEnrolled {
  secret: string
  recoveryCodes: string[]
}

/** Enrols and confirms TOTP for the member through the API (the password, then the app's current code). */
export async function enrolTotp(app: FastifyInstance, bearer: Record<string, string>, password: string): Promise<TotpEnrolled> {
  const started = await mfaCall(app, bearer, '/totp', { password })
  expect(started.statusCode, started.body).toBe(200)
  const { secret } = started.json() as { secret: string }
  const confirmed = await mfaCall(app, bearer, '/totp/confirm', { code: totpCode(secret) })
  expect(confirmed.statusCode, confirmed.body).toBe(200)
  return { secret, recoveryCodes: (confirmed.json() as { recoveryCodes: string[] }).recoveryCodes }
}

/**
 * A TOTP code no earlier step of this test has used: steps are taken once each, so a test that signs in several times
 * forgets the last step taken (as the owner) and asks for the code of the next one, within the allowed drift.
 */
export async function freshTotpCode(owner: Kysely<DB>, userId: number, secret: string): Promise<string> {
  await owner.updateTable('userSecondFactors').set({ totpLastStep: null }).where('userId', '=', userId).execute()
  return totpCode(secret)
}

/** GET /v1/me/mfa as the bearer: `{totp, sms, recoveryCodesLeft}`; fails the test on any other answer than 200. */
export async function mfaStatus(app: FastifyInstance, bearer: Record<string, string>) {
  const response = await app.inject({ method: 'GET', url: '/v1/me/mfa', headers: bearer })
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { totp: boolean; sms: boolean; recoveryCodesLeft: number }
}

/** The user's factor row as stored (owner view), or undefined when the user has none. */
export function storedSecondFactors(owner: Kysely<DB>, userId: number) {
  return owner
    .selectFrom('userSecondFactors')
    .select(['totpSecret', 'totpEnabledAt', 'totpLastStep', 'totpPendingSecret', 'smsEnabledAt'])
    .where('userId', '=', userId)
    .executeTakeFirst()
}

/** The hashes of the user's live recovery codes (owner view), sorted. */
export async function storedRecoveryCodes(owner: Kysely<DB>, userId: number): Promise<string[]> {
  const rows = await owner.selectFrom('userRecoveryCodes').select('codeHash').where('userId', '=', userId).orderBy('codeHash').execute()
  return rows.map((row) => row.codeHash)
}

/** Six digits that are the code of none of the steps `secret` passes now (one step of drift either way). */
export function notTheTotpCode(secret: string): string {
  const now = Date.now()
  const live = new Set([-30_000, 0, 30_000, 60_000].map((offset) => totpCode(secret, now + offset)))
  for (let candidate = 0; ; candidate++) {
    const code = String(candidate).padStart(6, '0')
    if (!live.has(code)) return code
  }
}
