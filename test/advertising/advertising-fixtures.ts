import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { owner } from '../support/fixtures.js'
import type { Actor } from '../support/staff-fixtures.js'

/** The opt-out number the tests' academies print, as an OWNER writes it, and as it is stored and printed. */
export const OPT_OUT_NUMBER = '080-123-4567'
export const OPT_OUT_DIGITS = '0801234567'

// The helpers fail the test at once when the route refuses: a forgotten setting would otherwise surface later as a
// puzzling OPT_OUT_NUMBER_REQUIRED or an advertisement that reaches a listed number.
function expectSuccess(response: LightMyRequestResponse, what: string): LightMyRequestResponse {
  if (response.statusCode >= 300) throw new Error(`${what} answered ${response.statusCode}: ${response.body}`)
  return response
}

/** Sets the tenant's opt-out number through PUT /v1/sms/advertising (only an OWNER may); null removes it. */
export async function setOptOutNumber(
  app: FastifyInstance,
  who: Pick<Actor, 'headers'>,
  optOutNumber: string | null = OPT_OUT_NUMBER,
): Promise<LightMyRequestResponse> {
  const response = await app.inject({ method: 'PUT', url: '/v1/sms/advertising', headers: who.headers, payload: { optOutNumber } })
  return expectSuccess(response, 'PUT /v1/sms/advertising')
}

/** Puts `phone` (any usual writing) on the tenant's opt-out list through POST /v1/sms/opt-outs (OWNER or MANAGER). */
export async function listOptOut(app: FastifyInstance, who: Pick<Actor, 'headers'>, phone: string): Promise<LightMyRequestResponse> {
  const response = await app.inject({ method: 'POST', url: '/v1/sms/opt-outs', headers: who.headers, payload: { phone } })
  return expectSuccess(response, 'POST /v1/sms/opt-outs')
}

/** The tenant's stored opt-out rows (read as the owner, past RLS), by number. */
export function storedOptOuts(tenant: { id: number }) {
  return owner()
    .selectFrom('smsOptOuts')
    .select(['phone', 'createdBy', 'createdAt', 'source'])
    .where('tenantId', '=', tenant.id)
    .orderBy('phone')
    .execute()
}

/**
 * Records consents to advertising for `phones` (any usual writing), as staff would through POST /v1/sms/ad-consents,
 * in one insert through the owner connection: advertisements reach only numbers with a live consent while the academy
 * requires consent (the default). `at` is the consent's time (default now); `db` an isolated database's owner.
 */
export async function recordConsents(
  tenant: { id: number },
  phones: readonly string[],
  { at = new Date(), db = owner() }: { at?: Date; db?: Kysely<DB> } = {},
): Promise<void> {
  const digits = [...new Set(phones.map((phone) => phone.replace(/\D/g, '').replace(/^82/, '0')))]
  if (digits.length === 0) return
  await sql`
    insert into sms_ad_consents (tenant_id, phone, source, evidence, consented_at, confirmed_at)
    select ${tenant.id}, p.phone, 'WRITTEN', 'test fixture', ${at}, ${at} from unnest(${digits}::varchar[]) as p (phone)
    on conflict (tenant_id, phone) do nothing`.execute(db)
}

/** The tenant's stored consents (read as the owner, past RLS), by number. */
export function storedConsents(tenant: { id: number }) {
  return owner()
    .selectFrom('smsAdConsents')
    .select(['phone', 'source', 'evidence', 'consentedAt', 'confirmedAt', 'createdBy', 'noticeSmsId', 'noticeFor'])
    .where('tenantId', '=', tenant.id)
    .orderBy('phone')
    .execute()
}
