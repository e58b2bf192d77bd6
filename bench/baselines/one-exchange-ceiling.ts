/**
 * Baseline: the database ceiling's work in one exchange that keeps nothing on the server session, so PgBouncer in
 * transaction mode can carry it. Verifies the HS256 bearer token, then sends one simple-protocol Query: begin read
 * only, the runtime role and the tenant set locally, the revoked-token lookup, the caller's user row under RLS,
 * commit. The pooler scenario runs it twice, connected directly and through PgBouncer, to tell what the pooler
 * itself costs a request on this machine: with one exchange and nothing prepared either way, the two differ only
 * by the pooler's process and hop.
 *
 *   GET /me
 */
import pg from 'pg'
import { serve, verifyingApp, type Claims } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
if (!settings.databaseUrl) throw new Error('DATABASE_URL is required')

const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.poolMax })

const app = await verifyingApp(settings)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The values go into the text (the simple protocol has no parameters); each is checked to be what it claims. */
function exchange(claims: Claims): string {
  const userId = Number(claims.sub)
  if (!Number.isSafeInteger(userId) || !Number.isSafeInteger(claims.tenant_id) || !UUID.test(claims.jti)) {
    throw new Error('unexpected claims')
  }
  return [
    'begin read only',
    'set local role svc_app',
    `select set_config('app.tenant_id', '${claims.tenant_id}', true)`,
    `select 1 from revoked_access_tokens where jti = '${claims.jti}'`,
    `select id, tenant_id, user_login_id, name, phone, role, status, avatar_seed from users where id = ${userId}`,
    'commit',
  ].join(';\n')
}

app.get('/health', async () => {
  await pool.query('select 1')
  return { status: 'UP' }
})

app.get('/me', async (request, reply) => {
  const results = (await pool.query(exchange(await request.jwtVerify<Claims>()))) as unknown as pg.QueryResult[]
  if (results[3]!.rowCount) return reply.code(401).send({ code: 'AUTH_004' })
  const user = results[4]!.rows[0]
  if (!user) return reply.code(401).send({ code: 'AUTH_003' })
  return user
})

app.addHook('onClose', () => pool.end())
await serve(app, settings)
