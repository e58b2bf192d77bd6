import { describe, expect } from 'vitest'
import { insertUserWithPassword, login, registerOwner, registerStudent } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { itPipelined, itPostgres, useTestApp } from '../support/helper.js'
import { recordExchanges, RUNTIME_BEGIN, RUNTIME_ROLE, RUNTIME_TIMEOUT } from '../support/statement-recorder.js'

/**
 * Every statement of a login takes CPU from its bcrypt comparison (the login benchmark runs at the bcrypt ceiling),
 * so the count is pinned here (it was 14): the address rate-limit hit, admission with the tenant lookup, the
 * credentials transaction, and the session transaction (lock, forgive, replace the device's session) in one call,
 * followed by its LOGIN_SUCCEEDED audit event, which must commit with the session.
 */
describe('POST /v1/login statements', () => {
  const app = useTestApp()

  const isBackgroundJob = (text: string) => /svc_purge_expired|svc_purge_old_sms|svc_claim_due_sms/i.test(text)

  /**
   * What one request sends, exchange by exchange (one write, one Sync, one answer each), without connection set-up
   * and background jobs.
   */
  async function recorded(request: () => Promise<unknown>): Promise<string[][]> {
    // Warm the pool first so that no connection set-up lands in the recording.
    await Promise.all(Array.from({ length: 3 }, () => app.current.inject({ method: 'GET', url: '/actuator/health' })))
    const exchanges = await recordExchanges(request)
    return exchanges
      .map((texts) => texts.map((text) => text.replace(/\s+/g, ' ').trim()))
      .filter((texts) => !texts.some(isBackgroundJob))
  }

  function expectLoginStatements(exchanges: string[][]) {
    const tenantScope = `select set_config('app.tenant_id', $1, true)`
    // Lone statements run in a transaction of their own that sets the role: begin, statement, commit in one write.
    expect(exchanges.flat()).toEqual([
      expect.stringMatching(RUNTIME_BEGIN),
      RUNTIME_ROLE,
      expect.stringMatching(RUNTIME_TIMEOUT),
      expect.stringMatching(/^insert into rate_limit_windows /),
      expect.stringMatching(/^commit$/i),
      expect.stringMatching(RUNTIME_BEGIN),
      RUNTIME_ROLE,
      expect.stringMatching(RUNTIME_TIMEOUT),
      expect.stringMatching(/^select \* from svc_login_admit\(/),
      expect.stringMatching(/^commit$/i),
      expect.stringMatching(RUNTIME_BEGIN),
      RUNTIME_ROLE,
      expect.stringMatching(RUNTIME_TIMEOUT),
      tenantScope,
      expect.stringMatching(/"password_hash" from "users" where/),
      expect.stringMatching(/^commit$/i),
      expect.stringMatching(RUNTIME_BEGIN),
      RUNTIME_ROLE,
      expect.stringMatching(RUNTIME_TIMEOUT),
      tenantScope,
      expect.stringMatching(/^select user_role, user_status from svc_login_open_session\(/),
      expect.stringMatching(/^\s*insert into audit_events /),
      expect.stringMatching(/^commit$/i),
    ])
    // Six round trips: the tenant binding travels with its transaction's first statement, the audit event (held:
    // it answers nothing) with the commit, and only the transactions of lone statements carry their commit along.
    expect(exchanges.map((texts) => texts.length)).toEqual([5, 5, 5, 1, 5, 2])
  }

  itPipelined('sends 11 statements (23 with the transactions of lone statements) for a portal login that replaces a session', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    const credentials = { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }
    expect((await login(app.current, credentials)).response.statusCode).toBe(200)
    let status = 0
    const sent = await recorded(async () => {
      status = (await login(app.current, credentials)).response.statusCode
    })
    expect(status).toBe(200)
    expectLoginStatements(sent)
    expect(await owner().selectFrom('sessions').select('sid').where('userId', '=', user.id).execute()).toHaveLength(1)
  })

  itPipelined('sends 11 statements (23 with the transactions of lone statements) for a root login through the owner directory', async () => {
    const registered = await registerOwner(app.current)
    let status = 0
    const sent = await recorded(async () => {
      status = (await login(app.current, { userLoginId: registered.loginId, password: registered.password })).response.statusCode
    })
    expect(status).toBe(200)
    expectLoginStatements(sent)
  })

  itPostgres('opens a registration\'s session with the same statement as a login\'s (one path for both)', async () => {
    const tenant = await createTenant()
    let status = 0
    const sent = (
      await recorded(async () => {
        status = (await registerStudent(app.current, tenant.slug)).response.statusCode
      })
    ).flat()
    expect(status).toBe(201)
    expect(sent.filter((text) => /svc_login_open_session/.test(text))).toEqual([
      expect.stringMatching(/^select user_role, user_status from svc_login_open_session\(/),
    ])
    // No statement of its own on the sessions table, as the TypeScript copy of these steps used to send.
    expect(sent.filter((text) => /\bsessions\b/.test(text))).toEqual([])
  })
})
