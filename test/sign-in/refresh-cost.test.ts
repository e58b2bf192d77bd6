import { sql } from 'kysely'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { decodeJwt, expectProblem, refresh } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { itPostgres, useTestApp } from '../support/helper.js'
import { recordStatements, RUNTIME_BEGIN, RUNTIME_ROLE, RUNTIME_TIMEOUT } from '../support/statement-recorder.js'
import { portalUser } from './portal-users.js'

describe('POST /v1/refresh cost', () => {
  // Reuse without the multi-tab grace (refresh-grace.test.ts), so a replay is reuse at once.
  const app = useTestApp({ env: { SVC_REFRESH_REUSE_GRACE_SECONDS: '0' } })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  const signedIn = async () => (await portalUser(app.current)).signIn()

  // Counts the statements the pg driver sends; the embedded store has no pg driver to observe.
  // A lone statement still runs in a transaction that sets the role (db/tenant-transaction.ts): begin, role, time
  // limit, the statement and commit (one write on the pipelined driver).
  const alone = (statements: string[]) => {
    expect(statements).toHaveLength(5)
    expect(statements.slice(0, 3)).toEqual([expect.stringMatching(RUNTIME_BEGIN), RUNTIME_ROLE, expect.stringMatching(RUNTIME_TIMEOUT)])
    expect(statements[4]).toBe('commit')
    return statements[3]
  }

  itPostgres('counts the address budget and rotates in one statement', async () => {
    const first = await signedIn()
    const { result, statements } = await recordStatements(() => refresh(app.current, first.refreshToken))
    expect(result.response.statusCode).toBe(200)
    expect(alone(statements)).toMatch(/from svc_rotate_session\(/)
  })

  itPostgres('counts a refresh without a usable token in one statement of its own', async () => {
    const { result, statements } = await recordStatements(() => refresh(app.current, 'not-a-token'))
    expectProblem(result.response, 401, 'AUTH_006')
    expect(alone(statements)).toMatch(/insert into rate_limit_windows/)
  })

  itPostgres('revokes a reused refresh token in that same one statement, and the revocation commits', async () => {
    const first = await signedIn()
    expect((await refresh(app.current, first.refreshToken)).response.statusCode).toBe(200)
    const { result, statements } = await recordStatements(() => refresh(app.current, first.refreshToken))
    expectProblem(result.response, 401, 'AUTH_016')
    expect(alone(statements)).toMatch(/from svc_rotate_session\(/)
    const sid = decodeJwt(first.refreshToken).sid as string
    expect(await owner().selectFrom('sessions').select('sid').where('sid', '=', sid).executeTakeFirst()).toBeUndefined()
    const revocation = await owner().selectFrom('sessionRevocations').select('reason').where('sid', '=', sid).executeTakeFirst()
    expect(revocation?.reason).toBe('REFRESH_TOKEN_REUSED')
  })

  it('runs the rotation with the caller rights (RLS applies), executable by the runtime role only', async () => {
    const { rows } = await sql<{ definer: boolean; app: boolean; everyone: boolean }>`
      select p.prosecdef as definer,
             has_function_privilege('svc_app', p.oid, 'execute') as app,
             exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE') as everyone
      from pg_proc p where p.proname = 'svc_rotate_session'`.execute(owner())
    expect(rows).toEqual([{ definer: false, app: true, everyone: false }])
  })
})
