/**
 * Baseline: a plain hand-written refresh, the honest ceiling of POST /v1/refresh. Nothing of the service: Fastify with
 * @fastify/cookie and `@fastify/jwt` verifying the HS256 refresh cookie, a `pg` Pool (max 10, as the service) whose
 * connections run as the non-owner role under RLS, and the statements of the service's rotation
 * (db/functions/svc_rotate_session.sql) written out, each awaited as a round trip of its own:
 *
 *   BEGIN
 *   SELECT hits FROM rate_limit_windows ...                          the address budget, read
 *   SELECT slug, status FROM tenants WHERE id = $1                   the tenant check
 *   SELECT set_config('app.tenant_id', $1, true), ...                the tenant GUC (and the rotation's async commit)
 *   SELECT ... FROM sessions s LEFT JOIN users u ... FOR UPDATE OF s the session and its user, locked
 *   INSERT INTO revoked_access_tokens ...                            the replaced access token stops working now
 *   UPDATE sessions SET access_jti = ..., refresh_jti = ...          the rotation
 *   INSERT INTO rate_limit_windows ... ON CONFLICT DO UPDATE         the address budget, counted
 *   COMMIT
 *
 * then both tokens signed with the service's claim set and lifetimes, both cookies set, and the service's answer.
 * The tokens are interchangeable with the service's (one secret, issuer and claim set): both rotate sessions of the
 * same database, so a chain may move from one to the other.
 *
 * What it leaves out: a refresh token whose JTI is not the session's current one is refused (401) and the
 * transaction rolled back, with no reuse revocation and no reuse grace (REISSUED); a refused refresh is not counted
 * against the address budget. The load never takes those paths.
 *
 *   POST /refresh                   the plain server
 */
import cookie from '@fastify/cookie'
import type { FastifyReply } from 'fastify'
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { serve, verifyingApp } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
if (!settings.databaseUrl) throw new Error('DATABASE_URL is required')

// The service's cookie names (lib/sign-in/cookies.ts), written out: a baseline runs none of the service's code.
const ACCESS_COOKIE = 'svc_access_token'
const REFRESH_COOKIE = 'svc_refresh_token'
// The service's default lifetimes (SVC_ACCESS_TTL, SVC_REFRESH_TTL), which the harness leaves as they are.
const ACCESS_SECONDS = 3600
const REFRESH_SECONDS = 604_800
// The per-address allowance the harness gives the service (SVC_LOGIN_IP_PER_MINUTE); the load comes from one address.
const BUDGET_LIMIT = 1_000_000

/** The claims of the service's tokens (lib/sign-in/tokens.ts); `type` tells a refresh token from an access token. */
interface TokenClaims {
  sub: string
  tenant_slug: string
  tenant_id: number
  role: string
  type: 'access' | 'refresh'
  sid: string
  jti: string
  iat: number
  exp: number
}

interface SessionRow {
  user_id: string
  access_jti: string
  access_expires_at: Date
  refresh_jti: string
  role: string | null
  status: string | null
}

// `options` makes every connection the runtime role from its start-up packet: no statement of its own, and no query
// issued from a 'connect' listener while the pool hands the client out (which pg warns about).
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.poolMax, options: '-c role=svc_app' })

const app = await verifyingApp(settings)
await app.register(cookie)

const SESSION = `
  select s.user_id, s.access_jti, s.access_expires_at, s.refresh_jti, u.role, u.status
  from sessions s
  left join users u on u.tenant_id = s.tenant_id and u.id = s.user_id
  where s.sid = $1
  for update of s`

const ROTATE = `
  update sessions
  set access_jti = $2, access_expires_at = $3, refresh_jti = $4, refresh_expires_at = $5,
      previous_refresh_jti = $6, last_refreshed_at = $7
  where sid = $1`

const COUNT = `
  insert into rate_limit_windows as w (key, window_start, hits) values ($1, date_trunc('minute', now()), 1)
  on conflict (key, window_start) do update set hits = w.hits + 1`

function refused(reply: FastifyReply, code: string) {
  return reply.code(401).send({ code })
}

/** The new pair's ids and times, fixed before the transaction that stores them (as the service plans them). */
function plan(now: number, lifetimeSeconds: number) {
  const exp = now + lifetimeSeconds
  return { jti: randomUUID(), iat: now, exp, expiresAt: new Date(exp * 1000) }
}

async function refresh(token: string | undefined, address: string, reply: FastifyReply) {
  if (!token) return refused(reply, 'AUTH_005')
  let claims: TokenClaims
  try {
    claims = app.jwt.verify<TokenClaims>(token)
  } catch {
    return refused(reply, 'AUTH_006')
  }
  if (claims.type !== 'refresh') return refused(reply, 'AUTH_006')

  const now = Math.floor(Date.now() / 1000)
  const access = plan(now, ACCESS_SECONDS)
  const next = plan(now, REFRESH_SECONDS)
  // The service's budget key for an IPv4 client (lib/sign-in/address-budget.ts), so both count the same row.
  const budgetKey = `auth:${address}`

  const client = await pool.connect()
  let role: string
  try {
    await client.query('BEGIN')
    const budget = await client.query<{ hits: number }>(
      "SELECT hits FROM rate_limit_windows WHERE key = $1 AND window_start = date_trunc('minute', now())",
      [budgetKey],
    )
    if ((budget.rows[0]?.hits ?? 0) >= BUDGET_LIMIT) {
      await client.query('ROLLBACK')
      return reply.code(429).send({ code: 'RATE_LIMITED' })
    }
    const tenant = await client.query<{ slug: string; status: string }>('SELECT slug, status FROM tenants WHERE id = $1', [claims.tenant_id])
    if (tenant.rows[0]?.slug !== claims.tenant_slug || tenant.rows[0]?.status !== 'ACTIVE') {
      await client.query('ROLLBACK')
      return refused(reply, 'AUTH_006')
    }
    // The rotation commits without waiting for its WAL flush, as the service's does; set here, in a statement this
    // transaction makes anyway, rather than in a round trip of its own. A refused refresh rolls back, so it is moot.
    await client.query("SELECT set_config('app.tenant_id', $1, true), set_config('synchronous_commit', 'off', true)", [String(claims.tenant_id)])
    const session = (await client.query<SessionRow>(SESSION, [claims.sid])).rows[0]
    if (!session || session.refresh_jti !== claims.jti || session.user_id !== claims.sub || session.status !== 'ACTIVE' || !session.role) {
      await client.query('ROLLBACK')
      return refused(reply, 'AUTH_006')
    }
    await client.query('INSERT INTO revoked_access_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING', [
      session.access_jti,
      session.access_expires_at,
    ])
    await client.query(ROTATE, [claims.sid, access.jti, access.expiresAt, next.jti, next.expiresAt, session.refresh_jti, new Date()])
    await client.query(COUNT, [budgetKey])
    await client.query('COMMIT')
    role = session.role
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }

  // The service's claim set; the issuer goes into the payload so the plugin's one signer serves every request.
  const subject = { sub: claims.sub, tenant_slug: claims.tenant_slug, tenant_id: claims.tenant_id, role, sid: claims.sid, iss: settings.issuer }
  const accessToken = app.jwt.sign({ ...subject, type: 'access', jti: access.jti, iat: access.iat, exp: access.exp })
  const refreshToken = app.jwt.sign({ ...subject, type: 'refresh', jti: next.jti, iat: next.iat, exp: next.exp })
  // As the service sets them under the harness (SVC_COOKIE_SECURE=false, the default SameSite).
  const attributes = { path: '/', httpOnly: true, secure: false, sameSite: 'lax' } as const
  reply.setCookie(ACCESS_COOKIE, accessToken, { ...attributes, maxAge: ACCESS_SECONDS })
  reply.setCookie(REFRESH_COOKIE, refreshToken, { ...attributes, maxAge: REFRESH_SECONDS })
  return { accessExpiresIn: ACCESS_SECONDS, refreshExpiresIn: REFRESH_SECONDS, user: null }
}

app.get('/health', async () => {
  await pool.query('select 1')
  return { status: 'UP' }
})
app.post('/refresh', async (request, reply) => refresh(request.cookies[REFRESH_COOKIE], request.ip, reply))

app.addHook('onClose', () => pool.end())
await serve(app, settings)
