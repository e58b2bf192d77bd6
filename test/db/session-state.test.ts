import { sql } from 'kysely'
import type pg from 'pg'
import { afterAll, beforeAll, expect, inject } from 'vitest'
import { openPostgres, type Database } from '../../db/database.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { databaseDriver, describePostgres, itPipelined, itPostgres } from '../support/helper.js'
import { RUNTIME_LOGIN_ROLE } from '../support/runtime-role.js'
import { connectionOf, recordQueries, sessionQuery } from '../support/statement-recorder.js'

// A transaction pooler hands each transaction to any server connection, so the service must leave nothing on one.
describePostgres('no session state on a server connection', () => {
  let asSuperuser: Database
  beforeAll(() => {
    // The owner URL of the run names a superuser: the strongest login a careless operator could configure.
    asSuperuser = openPostgres(inject('databaseUrl'), 1, { driver: databaseDriver })
  })
  afterAll(async () => {
    await asSuperuser.close()
  })

  /** The session's role and tenant, asked past the service client. */
  async function sessionState(client: pg.Client): Promise<{ role: string; tenant: string | null }> {
    const { rows } = await sessionQuery(client, "select current_user as role, nullif(current_setting('app.tenant_id', true), '') as tenant")
    return rows[0] as { role: string; tenant: string | null }
  }

  itPostgres('leaves the connection as its login role with no tenant after a tenant transaction', async () => {
    const tenant = await createTenant()
    let role = ''
    const client = await connectionOf(async () => {
      role = await withTenant(asSuperuser.db, tenant.id, async (trx) => {
        const { rows } = await sql<{ role: string }>`select current_user as role`.execute(trx)
        return rows[0]!.role
      })
    })
    expect(role).toBe('svc_app')
    const { rows } = await sessionQuery(client, 'select session_user as login')
    expect(await sessionState(client)).toEqual({ role: (rows[0] as { login: string }).login, tenant: null })
  })

  itPostgres('runs a statement sent outside any transaction as the runtime role, under RLS, even for a superuser login', async () => {
    const tenant = await createTenant()
    await insertUser(tenant, { role: 'OWNER' })
    const { rows } = await sql<{ role: string; visible: number }>`
      select current_user as role, (select count(*) from users)::int as visible`.execute(asSuperuser.db)
    // No tenant is bound outside a tenant transaction, so RLS shows no user at all.
    expect(rows).toEqual([{ role: 'svc_app', visible: 0 }])
    expect((await owner().selectFrom('users').select('id').where('tenantId', '=', tenant.id).execute()).length).toBe(1)
  })

  itPipelined('refuses query forms it cannot place inside a role-setting transaction', async () => {
    const client = await connectionOf(() => sql`select 1`.execute(asSuperuser.db))
    expect(() => client.query({ text: 'select count(*) from users' })).toThrow(/runtime connections accept only/)
  })

  itPipelined('sends no named statement when prepared statements are off', async () => {
    const unnamed = openPostgres(inject('runtimeDatabaseUrl'), 1, { preparedStatements: false })
    const tenant = await createTenant()
    try {
      const { queries } = await recordQueries(async () => {
        for (let run = 0; run < 3; run++) {
          await withTenant(unnamed.db, tenant.id, (trx) => sql`select ${run}::int as n`.execute(trx))
          await sql`select ${run}::int as n`.execute(unnamed.db)
        }
      })
      expect(queries.filter((query) => query.name)).toEqual([])
    } finally {
      await unnamed.close()
    }
  })

  itPipelined('names statements when prepared statements are on (the default)', async () => {
    const prepared = openPostgres(inject('runtimeDatabaseUrl'), 1)
    try {
      const { queries } = await recordQueries(() => sql`select ${1}::int as n`.execute(prepared.db))
      expect(queries.filter((query) => query.name).map((query) => query.text)).toEqual(['select $1::int as n'])
    } finally {
      await prepared.close()
    }
  })

  itPostgres(`serves as a login role that owns nothing and has no privilege of its own (${RUNTIME_LOGIN_ROLE})`, async () => {
    const { rows } = await sql<{ superuser: boolean; bypassrls: boolean; inherit: boolean; owned: number; canRead: boolean }>`
      select r.rolsuper as superuser, r.rolbypassrls as bypassrls, r.rolinherit as inherit,
             (select count(*) from pg_class c where c.relowner = r.oid)::int as owned,
             has_table_privilege(r.oid, 'users', 'select') as can_read
      from pg_roles r where r.rolname = ${RUNTIME_LOGIN_ROLE}`.execute(owner())
    // It reads nothing by itself: every privilege the suite's requests use comes from the role switch in each
    // transaction, so every endpoint test of the suite runs through that switch.
    expect(rows).toEqual([{ superuser: false, bypassrls: false, inherit: false, owned: 0, canRead: false }])
    expect(new URL(inject('runtimeDatabaseUrl')).username).toBe(RUNTIME_LOGIN_ROLE)
  })
})
