import bcrypt from 'bcrypt'
import { sql, type Kysely } from 'kysely'
import { randomInt } from 'node:crypto'
import type { DB } from '../../db/schema.js'
import { BENCH_KAKAO_CHANNEL, BENCH_KAKAO_CONTENT, BENCH_KAKAO_TEMPLATE } from './kakao-template.js'
import { checkDigit } from '../../lib/tenancy/business-number.js'
import { ACCESS_COOKIE, REFRESH_COOKIE } from '../../lib/sign-in/cookies.js'

/** One password for every seeded account; it passes the password policy. */
export const PASSWORD = 'Bench-Passw0rd-2026'

let hash: Promise<string> | null = null

/** PASSWORD hashed at the production cost (10), once per process: inserted users log in with real bcrypt work. */
export function passwordHash(): Promise<string> {
  hash ??= bcrypt.hash(PASSWORD, 10)
  return hash
}

export interface SeededTenant {
  tenantId: number
  slug: string
  customId: string
  ownerId: number
  ownerLoginId: string
  /** MANAGER accounts, each able to log in with PASSWORD through the portal entry (customId). */
  staff: { id: number; loginId: string }[]
}

function businessNumber(): string {
  const nine = Array.from({ length: 9 }, () => randomInt(10)).join('')
  return `${nine}${checkDigit(nine)}`
}

export function cookieValue(response: Response, name: string): string {
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(';', 1)
    const separator = pair!.indexOf('=')
    if (pair!.slice(0, separator) === name) return pair!.slice(separator + 1)
  }
  throw new Error(`answer without a ${name} cookie (status ${response.status})`)
}

async function expectStatus(response: Response, status: number, what: string): Promise<void> {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status}: ${await response.text()}`)
}

/**
 * A tenant as a customer gets one: the owner registers over HTTP; staff accounts are then inserted in bulk through
 * the owner connection (what `npm run user:create` does one at a time), all with the production bcrypt cost.
 */
export async function seedTenant(serviceUrl: string, owner: Kysely<DB>, staffCount: number): Promise<SeededTenant> {
  const suffix = randomInt(1e9).toString(36)
  const ownerLoginId = `bench-owner-${suffix}`
  const response = await fetch(`${serviceUrl}/v1/register/owner`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      instituteName: `Bench Academy ${suffix}`,
      businessRegistrationNumber: businessNumber(),
      userLoginId: ownerLoginId,
      password: PASSWORD,
      name: 'Bench Owner',
    }),
  })
  await expectStatus(response, 201, 'owner registration')
  const { user } = (await response.json()) as { user: { id: number; tenantId: number; tenantSlug: string; tenantCustomId: string } }
  const passwordHashValue = await passwordHash()
  const { rows } = await sql<{ id: number; userLoginId: string }>`
    insert into users (tenant_id, user_login_id, password_hash, name, role, avatar_seed)
    select ${user.tenantId}, 'bench-staff-' || g, ${passwordHashValue}, 'Staff ' || g, 'MANAGER', 'seed-' || g
    from generate_series(1, ${staffCount}) g
    returning id, user_login_id`.execute(owner)
  return {
    tenantId: user.tenantId,
    slug: user.tenantSlug,
    customId: user.tenantCustomId,
    ownerId: user.id,
    ownerLoginId,
    staff: rows.map((row) => ({ id: row.id, loginId: row.userLoginId })),
  }
}

export interface SessionTokens {
  access: string
  refresh: string
}

/** Logs in over HTTP (portal entry) and returns the session's tokens from its cookies. */
export async function login(serviceUrl: string, customId: string | undefined, loginId: string): Promise<SessionTokens> {
  const response = await fetch(`${serviceUrl}/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userLoginId: loginId, password: PASSWORD, ...(customId && { customId }) }),
  })
  await expectStatus(response, 200, `login of ${loginId}`)
  await response.arrayBuffer()
  return { access: cookieValue(response, ACCESS_COOKIE), refresh: cookieValue(response, REFRESH_COOKIE) }
}

/** Logs every staff account in (a few at a time, like real users), returning one session each. */
export async function loginStaff(serviceUrl: string, tenant: SeededTenant, count = tenant.staff.length): Promise<SessionTokens[]> {
  const users = tenant.staff.slice(0, count)
  const sessions: SessionTokens[] = new Array(users.length)
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < users.length) {
        const index = next++
        sessions[index] = await login(serviceUrl, tenant.customId, users[index]!.loginId)
      }
    }),
  )
  return sessions
}

/**
 * History rows as the service leaves them: six statuses, three of four by the owner, every tenth titled "exam",
 * one a second apart. Nothing is due (next_attempt_at a year ahead), so a dispatcher leaves them alone.
 */
export async function fillHistory(owner: Kysely<DB>, tenantId: number, ownerId: number, instructorId: number, count: number): Promise<void> {
  await sql`
    insert into sms_messages (tenant_id, sender_id, recipient_type, recipient_count, title, content, message_type,
      estimated_segments, unit_price, total_price, status, provider, next_attempt_at, sent_at, created_at, updated_at)
    select ${tenantId}, case when g % 4 = 0 then ${instructorId}::bigint else ${ownerId}::bigint end,
      case when g % 3 = 0 then 'GUARDIAN' else 'CUSTOM' end, 1,
      'Notice ' || g || case when g % 10 = 0 then ' exam' else '' end,
      'Hello {name}, this is message number ' || g || ' of the benchmark, long enough to be cut in the list view.',
      'SMS', 1, 20, 20, (array['PENDING','DISPATCHED','SENT','FAILED','PARTIAL','CANCELLED'])[1 + g % 6], 'mock',
      now() + interval '365 days',
      case when g % 6 in (2, 3, 4) then now() - make_interval(secs => g) end,
      now() - make_interval(secs => g), now()
    from generate_series(1, ${count}) g`.execute(owner)
}

/**
 * `count` PENDING messages due now, each with `recipients` recipients, inserted set-based as one committed send
 * leaves them (provider extsms, a registered sender number).
 */
export async function insertDueMessages(
  owner: Kysely<DB>,
  tenant: { tenantId: number; senderId: number },
  count: number,
  recipients: number,
  channel: 'SMS' | 'ALIMTALK' = 'SMS',
): Promise<void> {
  // A KakaoTalk notice names the fake's approved template; its values are the message's time and each
  // recipient's name and class, so every recipient's text differs as a real notice's does.
  const alimtalk = channel === 'ALIMTALK'
  await sql`
    with created as (
      insert into sms_messages (tenant_id, sender_id, sender_number, recipient_type, recipient_count, title, content,
                                message_type, estimated_segments, unit_price, total_price, provider, next_attempt_at,
                                channel, fallback, kakao_template_id, kakao_pf_id, kakao_provider_template_id, kakao_variables)
      select ${tenant.tenantId}, ${tenant.senderId}, '0212345678', 'GUARDIAN', ${recipients}, 'Notice',
             ${alimtalk ? BENCH_KAKAO_CONTENT : 'Hello {name}'}, ${alimtalk ? 'LMS' : 'SMS'}, ${recipients}, ${alimtalk ? 13 : 20},
             ${alimtalk ? 13 : 20}::int * ${recipients}::int, 'extsms', now(), ${channel}, ${alimtalk ? 'SMS' : null},
             ${alimtalk ? 1 : null}, ${alimtalk ? BENCH_KAKAO_CHANNEL : null}, ${alimtalk ? BENCH_KAKAO_TEMPLATE : null},
             ${alimtalk ? JSON.stringify({ time: '16:02' }) : null}::jsonb
      from generate_series(1, ${count})
      returning id
    )
    insert into sms_recipients (tenant_id, sms_id, recipient_index, phone, name, recipient_role, variables)
    select ${tenant.tenantId}, created.id, r, '010' || lpad((10000000 + (created.id * ${recipients} + r) % 90000000)::text, 8, '0'),
           'n' || r, 'GUARDIAN', case when ${alimtalk}::boolean then jsonb_build_object('name', 'n' || r, 'className', 'Math A') end
    from created cross join generate_series(0, ${recipients - 1}) r`.execute(owner)
}
