import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { expect } from 'vitest'
import type { DB } from '../../../db/schema.js'
import { enrolTotp, freshTotpCode, mfaCookieOf, passwordStep, secondStep, type TotpEnrolled } from '../../account-security/second-factor/mfa-bed.js'
import { bearerFor, insertMember, type Academy, type Member } from '../../account-security/recovery-bed.js'
import { isolatedAcademy, putEndpoint, type IsolatedAcademy } from '../../events/delivery-bed.js'

// An academy whose secrets are sealed by an app, through the API as clients make them: a member with TOTP (its secret
// and its recovery codes' key) and a webhook endpoint (its signing secret). Then what each sealed value is for,
// through the API again: the second step of a login, a delivery the receiver verifies.

export interface SealedAcademy {
  academy: IsolatedAcademy
  tenant: Academy
  member: Member
  totp: TotpEnrolled
  webhookSecret: string
}

/** Apps over such a database need SVC_WEBHOOK_ALLOW_PRIVATE=true: the endpoint is a loopback receiver. */
export async function academyWithSealedValues(app: FastifyInstance, owner: Kysely<DB>, receiverUrl: string): Promise<SealedAcademy> {
  const academy = await isolatedAcademy(app, owner)
  // insertTenantAndSender's customId (test/support/dispatch-fixtures.ts), which a login names.
  const tenant = { id: academy.tenantId, slug: academy.slug, customId: academy.slug.slice(2, 12).toUpperCase(), name: academy.slug }
  const member = await insertMember(owner, tenant)
  const totp = await enrolTotp(app, await bearerFor(app, member, tenant), member.password)
  const webhookSecret = await putEndpoint(app, academy, receiverUrl)
  return { academy, tenant, member, totp, webhookSecret }
}

/** The status of the second step of the member's login with `method` (a fresh TOTP code unless `code` is given). */
export async function secondStepStatus(app: FastifyInstance, owner: Kysely<DB>, sealed: SealedAcademy, method: 'TOTP' | 'RECOVERY_CODE', code?: string): Promise<number> {
  const first = await passwordStep(app, sealed.member, sealed.tenant)
  expect(first.statusCode, first.body).toBe(200)
  expect(first.json()).toMatchObject({ mfaRequired: true })
  const answer = code ?? (await freshTotpCode(owner, sealed.member.id, sealed.totp.secret))
  return (await secondStep(app, mfaCookieOf(first), method, answer)).statusCode
}
