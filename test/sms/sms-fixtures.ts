import bcrypt from 'bcrypt'
import { createHash, createHmac, randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import type { RegistrationStatus, Role } from '../../db/schema.js'
import { problemType, type ErrorCode } from '../../lib/errors.js'
import { insertUser, owner, type TenantRow, type UserRow } from '../support/fixtures.js'

/** Helpers for the sender-setting tests: real logins, signed internal calls and rows in a given state. */

export const TEST_HMAC_SECRET = 'internal-hmac-secret-for-tests-0123456789'

type InjectResponse = Awaited<ReturnType<FastifyInstance['inject']>>

export function expectProblem(response: InjectResponse, status: number, code: ErrorCode) {
  expect({ status: response.statusCode, body: response.json() }).toMatchObject({ status, body: { code, status } })
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(response.json().type).toBe(problemType(code))
  return response.json()
}

/**
 * A staff member signed in through `POST /v1/login` (portal entry with the tenant's customId), as a client
 * would be: the access token is the `svc_access_token` cookie.
 */
export async function loginAs(app: FastifyInstance, tenant: TenantRow, role: Role): Promise<{ user: UserRow; accessToken: string }> {
  const password = `Pw-${randomBytes(6).toString('hex')}-42`
  const user = await insertUser(tenant, { role, passwordHash: await bcrypt.hash(password, 4) })
  const response = await app.inject({
    method: 'POST',
    url: '/v1/login',
    payload: { userLoginId: user.userLoginId, password, customId: tenant.customId },
  })
  expect(response.statusCode).toBe(200)
  const accessToken = response.cookies.find((cookie) => cookie.name === 'svc_access_token')?.value
  expect(accessToken).toBeTruthy()
  return { user, accessToken: accessToken! }
}

export interface SignedCall {
  slug: string
  /** The tenant the signature claims (X-Tenant-Slug); the path slug unless a test says otherwise. */
  headerSlug?: string
  body?: string | object
  method?: string
  /** Appended to the path, e.g. `?dryRun=1`. */
  query?: string
  /** Another request target than the approval route's. */
  path?: string
  secret?: string
  timestamp?: number | string
}

/**
 * Headers and payload of an internal call, signed as docs/api.md#signed-internal-calls describes (written out here on
 * purpose, independently of the plugin, so a mistake in one does not hide in the other).
 */
export function signedApproval(call: SignedCall) {
  const url = `${call.path ?? `/internal/sms/sender-settings/${call.slug}/approval`}${call.query ?? ''}`
  const method = call.method ?? 'PATCH'
  const payload = call.body === undefined ? '' : typeof call.body === 'string' ? call.body : JSON.stringify(call.body)
  const timestamp = String(call.timestamp ?? Math.floor(Date.now() / 1000))
  const headerSlug = call.headerSlug ?? call.slug
  const bodyHash = createHash('sha256').update(payload).digest('hex')
  const signature = createHmac('sha256', call.secret ?? TEST_HMAC_SECRET)
    .update(`${timestamp}\n${method}\n${url}\n${headerSlug}\n${bodyHash}`)
    .digest('hex')
  return {
    method: method as 'PATCH',
    url,
    payload,
    headers: {
      'content-type': 'application/json',
      'x-tenant-slug': headerSlug,
      'x-timestamp': timestamp,
      'x-signature': signature,
    } as Record<string, string>,
  }
}

export interface SenderRowValues {
  senderNumber: string
  registrationStatus: RegistrationStatus
  rejectionReason?: string | null
  approvedAt?: Date | null
  rejectedAt?: Date | null
}

/** Puts the tenant's live-provider row into a given state through the owner connection, as an operator could. */
export async function seedSenderSetting(tenant: { id: number }, values: SenderRowValues) {
  return owner()
    .insertInto('smsSenderSettings')
    .values({ tenantId: tenant.id, provider: 'extsms', updatedAt: new Date('2026-01-01T00:00:00Z'), ...values })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function senderRow(tenant: { id: number }) {
  return owner().selectFrom('smsSenderSettings').selectAll().where('tenantId', '=', tenant.id).executeTakeFirst()
}
