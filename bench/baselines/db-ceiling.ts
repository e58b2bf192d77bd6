/**
 * Baseline: the database ceiling. What GET /v1/me must do at least, written by hand: verify the HS256 bearer token,
 * then one transaction on a pooled connection of the runtime role (svc_app, subject to RLS) that binds the tenant
 * GUC, checks the token's JTI against the revocation list and reads the caller's user row; commit; answer the row.
 *
 *   GET /me                         the ceiling (the service's target is 0.9 x this)
 *   GET /me-without-revocation      the same without the revoked-token lookup (the stretch target)
 */
import type { FastifyReply } from 'fastify'
import pg from 'pg'
import { serve, verifyingApp, type Claims } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
if (!settings.databaseUrl) throw new Error('DATABASE_URL is required')

// Same pool size as the service instances beside it (BENCH_DB_POOL_MAX, the service's default 10); every connection
// is the runtime role from its start-up packet (`options`), with no query issued from a 'connect' listener while the
// pool hands the client out (which pg warns about).
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.poolMax, options: '-c role=svc_app' })

const app = await verifyingApp(settings)

const USER = 'select id, tenant_id, user_login_id, name, phone, role, status, avatar_seed from users where id = $1'

async function me(claims: Claims, checkRevocation: boolean, reply: FastifyReply) {
  const client = await pool.connect()
  try {
    await client.query('begin')
    await client.query("select set_config('app.tenant_id', $1, true)", [String(claims.tenant_id)])
    if (checkRevocation) {
      const revoked = await client.query('select 1 from revoked_access_tokens where jti = $1', [claims.jti])
      if (revoked.rowCount) {
        await client.query('rollback')
        return reply.code(401).send({ code: 'AUTH_004' })
      }
    }
    const { rows } = await client.query(USER, [Number(claims.sub)])
    await client.query('commit')
    if (!rows[0]) return reply.code(401).send({ code: 'AUTH_003' })
    return rows[0]
  } catch (error) {
    await client.query('rollback').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

app.get('/health', async () => {
  await pool.query('select 1')
  return { status: 'UP' }
})
app.get('/me', async (request, reply) => me(await request.jwtVerify<Claims>(), true, reply))
app.get('/me-without-revocation', async (request, reply) => me(await request.jwtVerify<Claims>(), false, reply))

app.addHook('onClose', () => pool.end())
await serve(app, settings)
