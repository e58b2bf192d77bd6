/**
 * Experiment behind the pooler notes in bench/results: what GET /v1/me's statements cost through PgBouncer
 * (transaction mode, PgBouncer's defaults) against a direct connection, without HTTP. Each shape runs 10 service pg
 * clients in a loop for BENCH_DURATION seconds (default 5) and prints exchanges per second; shapes whose names end
 * in `named` prepare their statements, so they run direct only (PgBouncer 1.18 cannot carry them).
 *   npx tsx bench/tools/pooler-statements.ts [shape ...]
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { ServiceClient, type ServiceClientConfig } from '../../db/driver/pg-client.js'
import { SyncedBatch, type BatchStatement } from '../../db/driver/synced-batch.js'
import { startPgBouncer } from '../../test/topology/pgbouncer.js'
import { runCleanups } from '../lib/cleanup.js'
import { createBenchDatabase } from '../lib/database.js'

const seconds = Number(process.env.BENCH_DURATION ?? 5)
const database = await createBenchDatabase()
const owner = new pg.Client({ connectionString: database.url })
await owner.connect()
const { rows: [tenant] } = await owner.query(
  `insert into tenants (slug, custom_id, name, status, updated_at) values ('t1', 'c1', 'T', 'ACTIVE', now()) returning id`,
)
const { rows: [user] } = await owner.query(
  `insert into users (tenant_id, user_login_id, password_hash, name, role, status, avatar_seed, updated_at)
   values ($1, 'u1', 'x', 'U', 'OWNER', 'ACTIVE', 'a', now()) returning id`,
  [tenant.id],
)
await owner.query(`
create or replace function svc_me_probe(p_tenant_id bigint, p_access_jti uuid, p_user_id bigint, p_timeout text)
returns setof record language plpgsql volatile security invoker as $$
begin
  perform set_config('role', 'svc_app', true);
  perform set_config('statement_timeout', p_timeout, true);
  perform svc_request_scope(p_tenant_id, p_access_jti, p_user_id);
  return query select * from svc_current_user(p_user_id);
end $$;
grant execute on function svc_me_probe(bigint, uuid, bigint, text) to svc_app;
`)
await owner.end()

const dir = await mkdtemp(join(tmpdir(), 'probe-'))
const bouncer = await startPgBouncer({ dir, server: new URL(database.url), database: database.name, mode: 'transaction', poolSize: 10 })
const pooledUrl = new URL(database.url)
pooledUrl.port = String(bouncer.port)
pooledUrl.pathname = '/svc'

const scope = 'select svc_request_scope($1::bigint, $2::uuid, $3::bigint)'
const read = 'select * from svc_current_user($1::bigint)'
const jti = randomUUID()
type Shape = (client: pg.Client, n: number) => Promise<unknown>
const batch = (c: pg.Client, statements: BatchStatement[]) =>
  new Promise((resolve, reject) => {
    const b = new SyncedBatch(statements)
    b.callback = (error, outcomes) => (error ? reject(error) : outcomes!.every((o) => o.status === 'answered') ? resolve(outcomes) : reject(new Error(JSON.stringify(outcomes))))
    c.query(b as never)
  })
const settings = "select set_config('role', $1, true), set_config('statement_timeout', $2, true)"
const shapes: Record<string, Shape> = {
  batch5: (c) => batch(c, [
    { text: 'begin read only', values: [] },
    { text: settings, values: ['svc_app', '5000'] },
    { text: scope, values: [tenant.id, jti, user.id] },
    { text: read, values: [user.id] },
    { text: 'commit', values: [] },
  ]),
  batch6set: (c) => batch(c, [
    { text: 'begin read only', values: [] },
    { text: 'set local role "svc_app"', values: [] },
    { text: 'set local statement_timeout = 5000', values: [] },
    { text: scope, values: [tenant.id, jti, user.id] },
    { text: read, values: [user.id] },
    { text: 'commit', values: [] },
  ]),
  qbatch: (c) =>
    Promise.all([
      c.query('begin read only; set local role "svc_app"; set local statement_timeout = 5000'),
      batch(c, [{ text: scope, values: [tenant.id, jti, user.id] }, { text: read, values: [user.id] }, { text: 'commit', values: [] }]),
    ]),
  batch5named: (c) => batch(c, [
    { text: 'begin read only', values: [] },
    { name: 'b1', text: settings, values: ['svc_app', '5000'] },
    { name: 'b2', text: scope, values: [tenant.id, jti, user.id] },
    { name: 'b3', text: read, values: [user.id] },
    { text: 'commit', values: [] },
  ]),
  implicit3: (c) => batch(c, [
    { text: "select set_config('role', $1, true), set_config('statement_timeout', $2, true), set_config('transaction_read_only', 'on', true)", values: ['svc_app', '5000'] },
    { text: scope, values: [tenant.id, jti, user.id] },
    { text: read, values: [user.id] },
  ]),
  implicit3named: (c) => batch(c, [
    { name: 'i1', text: "select set_config('role', $1, true), set_config('statement_timeout', $2, true), set_config('transaction_read_only', 'on', true)", values: ['svc_app', '5000'] },
    { name: 'i2', text: scope, values: [tenant.id, jti, user.id] },
    { name: 'i3', text: read, values: [user.id] },
  ]),
  current: (c) =>
    Promise.all([
      c.query('begin read only; set local role "svc_app"; set local statement_timeout = 5000'),
      c.query(scope, [tenant.id, jti, user.id]),
      c.query(read, [user.id]),
      c.query('commit'),
    ]),
  single: (c) => c.query('select * from svc_me_probe($1, $2, $3, $4) as (id bigint, tenant_id bigint, user_login_id varchar, name varchar, phone varchar, role varchar, status varchar, avatar_seed varchar, tenant_slug varchar, tenant_custom_id varchar, tenant_custom_domain varchar, tenant_name varchar, tenant_status varchar, tenant_onboarding_completed_at timestamptz)', [tenant.id, jti, user.id, '5000']),
  // begin + one statement + commit
  selectOne: (c) => c.query('select 1'),
  simpleAll: (c) =>
    c.query(`begin read only; set local role "svc_app"; set local statement_timeout = 5000; select svc_request_scope(${tenant.id}::bigint, '${jti}'::uuid, ${user.id}::bigint); select * from svc_current_user(${user.id}::bigint); commit`),
}

async function run(url: string, shape: Shape, preparedStatements: boolean): Promise<number> {
  const clients = await Promise.all(
    Array.from({ length: 10 }, async () => {
      const client = new ServiceClient({ connectionString: url, pipeline: true, preparedStatements } as ServiceClientConfig)
      await client.connect()
      return client
    }),
  )
  let done = 0
  const end = Date.now() + seconds * 1000
  await Promise.all(clients.map(async (client) => { while (Date.now() < end) { await shape(client, done); done++ } }))
  await Promise.all(clients.map((client) => client.end()))
  return done / seconds
}

const only = process.argv.slice(2)
for (const [name, shape] of Object.entries(shapes)) {
  if (only.length && !only.includes(name)) continue
  const direct = await run(database.url, shape, true)
  const pooled = name.endsWith('named') ? NaN : await run(pooledUrl.toString(), shape, false)
  console.log(`${name.padEnd(20)} direct ${direct.toFixed(0).padStart(6)}/s  pgbouncer ${pooled.toFixed(0).padStart(6)}/s  ratio ${(pooled / direct).toFixed(2)}`)
}
await bouncer.child.stop('SIGINT')
await runCleanups()
process.exit(0)
