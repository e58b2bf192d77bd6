/**
 * Baseline: a plain hand-written RLS request, the honest ceiling of GET /v1/me. Nothing of the service: Fastify with
 * `@fastify/jwt` verifying the HS256 bearer token, a `pg` Pool (max 10, as the service), and four awaited statements
 * as a non-owner role under forced row-level security, each a round trip of its own:
 *
 *   BEGIN; SELECT set_config('app.tenant_id', $1, true); SELECT id, tenant_id, name FROM bench_items WHERE id = $1; COMMIT
 *
 * then the row as JSON. bench_items is a small table (one row per user of the database, keyed by the user's id) with
 * RLS enabled and forced, made here at start as the database owner.
 *
 *   GET /item                       the plain server
 *   GET /item-with-revocation       the same with the revoked-token lookup as a fifth statement
 */
import type { FastifyReply } from 'fastify'
import pg from 'pg'
import { serve, verifyingApp, type Claims } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
if (!settings.databaseUrl) throw new Error('DATABASE_URL is required')

// Made once per database; what RLS applies to is exactly what the service's tables have: enabled, forced, the GUC.
const owner = new pg.Client({ connectionString: settings.databaseUrl })
await owner.connect()
await owner.query(`
  create table if not exists bench_items (id bigint primary key, tenant_id bigint not null, name text not null);
  alter table bench_items enable row level security;
  alter table bench_items force row level security;
  drop policy if exists bench_items_tenant on bench_items;
  create policy bench_items_tenant on bench_items
    using (tenant_id = (select nullif(current_setting('app.tenant_id', true), '')::bigint));
  grant select on bench_items to svc_app;
  insert into bench_items (id, tenant_id, name) select id, tenant_id, name from users on conflict (id) do nothing;
`)
await owner.end()

// `options` makes every connection the runtime role from its start-up packet: no query issued from a 'connect'
// listener while the pool hands the client out (which pg warns about).
const pool = new pg.Pool({ connectionString: settings.databaseUrl, max: settings.poolMax, options: '-c role=svc_app' })

const app = await verifyingApp(settings)

async function item(claims: Claims, checkRevocation: boolean, reply: FastifyReply) {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query("SELECT set_config('app.tenant_id', $1, true)", [String(claims.tenant_id)])
    if (checkRevocation) {
      const revoked = await client.query('SELECT 1 FROM revoked_access_tokens WHERE jti = $1', [claims.jti])
      if (revoked.rowCount) {
        await client.query('ROLLBACK')
        return reply.code(401).send({ code: 'AUTH_004' })
      }
    }
    const { rows } = await client.query('SELECT id, tenant_id, name FROM bench_items WHERE id = $1', [Number(claims.sub)])
    await client.query('COMMIT')
    if (!rows[0]) return reply.code(404).send({ code: 'NOT_FOUND' })
    return rows[0]
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

app.get('/health', async () => {
  await pool.query('select 1')
  return { status: 'UP' }
})
app.get('/item', async (request, reply) => item(await request.jwtVerify<Claims>(), false, reply))
app.get('/item-with-revocation', async (request, reply) => item(await request.jwtVerify<Claims>(), true, reply))

app.addHook('onClose', () => pool.end())
await serve(app, settings)
