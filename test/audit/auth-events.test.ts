import { describe, expect, it } from 'vitest'
import { storedAuditEvents, theAuditEvent, type StoredAuditEvent } from './audit-fixtures.js'
import { decodeJwt, expectProblem, insertUserWithPassword, login, registerOwner, registerStudent, strongPassword, uniqueAddress, until } from '../support/auth-fixtures.js'
import { createTenant, owner, unique, type TenantRow } from '../support/fixtures.js'
import { itConcurrent, useTestApp } from '../support/helper.js'
import { blockedBy, holdLocks } from '../support/lock-holder.js'
import { expectLocked, LOCK_SECONDS, LOCKOUT_SETTINGS, MAX_FAILURES } from '../sign-in/lockout-settings.js'
import { portalUser, sameLoginIdInTwoTenants } from '../sign-in/portal-users.js'

/** The events of sign-in (POST /v1/login) and registration: who, what, from where, and never a password. */
describe('audit events of sign-in and registration', () => {
  const app = useTestApp({ env: LOCKOUT_SETTINGS })

  /** Request extras that the events must carry back: a request id of the test's own and a fresh address. */
  function traced(requestId: string, headers: Record<string, string> = {}) {
    const address = uniqueAddress()
    return { address, requestId, extras: { remoteAddress: address, headers: { 'x-request-id': requestId, ...headers } } }
  }

  /** Every event anywhere that a request wrote, whatever its tenant (read as the owner, past RLS). */
  const eventsOfRequest = (requestId: string) =>
    owner().selectFrom('auditEvents').select(['tenantId', 'type']).where('requestId', '=', requestId).execute()

  const expectNoSecret = (event: StoredAuditEvent, ...secrets: string[]) => {
    for (const secret of secrets) expect(JSON.stringify(event.details)).not.toContain(secret)
  }

  describe('LOGIN_SUCCEEDED', () => {
    it('records the user as actor and target, with the session opened and its device category', async () => {
      const { tenant, user, credentials } = await portalUser(app.current)
      const { address, requestId, extras } = traced(unique('req-login'), { 'x-device-category': 'mobile' })
      const signedIn = await login(app.current, credentials, extras)
      expect(signedIn.response.statusCode).toBe(200)

      const sid = decodeJwt(signedIn.accessToken).sid
      const stored = await owner().selectFrom('sessions').select('sid').where('userId', '=', user.id).execute()
      expect(stored).toEqual([{ sid }])
      const event = await theAuditEvent(tenant, 'LOGIN_SUCCEEDED')
      expect(event).toMatchObject({
        actorId: user.id,
        targetType: 'USER',
        targetId: String(user.id),
        requestId,
        ipAddress: address,
      })
      expect(event.details).toEqual({ sessionId: sid, deviceCategory: 'MOBILE', method: 'password' })
      expectNoSecret(event, credentials.password)
      expect(await storedAuditEvents(tenant, 'LOGIN_FAILED')).toEqual([])
    })

    it("records a root-entry login of an owner in the owner's tenant", async () => {
      const registered = await registerOwner(app.current)
      const { requestId, extras } = traced(unique('req-root'))
      const signedIn = await login(app.current, { userLoginId: registered.loginId, password: registered.password }, extras)
      expect(signedIn.response.statusCode).toBe(200)
      const event = await theAuditEvent({ id: registered.user.tenantId }, 'LOGIN_SUCCEEDED')
      expect(event).toMatchObject({ actorId: registered.user.id, targetId: String(registered.user.id), requestId })
      expect(event.details).toEqual({ sessionId: decodeJwt(signedIn.accessToken).sid, deviceCategory: 'WEB', method: 'password' })
    })
  })

  describe('LOGIN_FAILED', () => {
    it('records a wrong password of a known user, with no actor and without the password tried', async () => {
      const { tenant, user, credentials } = await portalUser(app.current)
      const wrongPassword = strongPassword()
      const { address, requestId, extras } = traced(unique('req-wrong'))
      expectProblem((await login(app.current, { ...credentials, password: wrongPassword }, extras)).response, 401, 'AUTH_001')

      const event = await theAuditEvent(tenant, 'LOGIN_FAILED')
      expect(event).toMatchObject({
        actorId: null,
        targetType: 'USER',
        targetId: String(user.id),
        requestId,
        ipAddress: address,
      })
      expect(event.details).toEqual({ reason: 'WRONG_PASSWORD' })
      expectNoSecret(event, wrongPassword, credentials.password)
      expect(await storedAuditEvents(tenant, 'LOGIN_SUCCEEDED')).toEqual([])
    })

    it('records a right password refused because the tenant is not ACTIVE (AUTH_010)', async () => {
      const tenant = await createTenant({ status: 'SUSPENDED' })
      const user = await insertUserWithPassword(tenant)
      const { address, requestId, extras } = traced(unique('req-suspended'))
      const refused = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }, extras)
      expectProblem(refused.response, 403, 'AUTH_010')

      const event = await theAuditEvent(tenant, 'LOGIN_FAILED')
      expect(event).toMatchObject({ actorId: null, targetType: 'USER', targetId: String(user.id), requestId, ipAddress: address })
      expect(event.details).toEqual({ reason: 'TENANT_NOT_ACTIVE' })
      expectNoSecret(event, user.password)
    })

    it('records a right password refused because the user is not ACTIVE (AUTH_015)', async () => {
      const tenant = await createTenant()
      const user = await insertUserWithPassword(tenant, { status: 'SUSPENDED' })
      const { address, requestId, extras } = traced(unique('req-user-suspended'))
      const refused = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }, extras)
      expectProblem(refused.response, 403, 'AUTH_015')

      const event = await theAuditEvent(tenant, 'LOGIN_FAILED')
      expect(event).toMatchObject({ actorId: null, targetType: 'USER', targetId: String(user.id), requestId, ipAddress: address })
      expect(event.details).toEqual({ reason: 'USER_NOT_ACTIVE' })
      expect(await storedAuditEvents(tenant, 'LOGIN_SUCCEEDED')).toEqual([])
    })

    itConcurrent('records a user suspended while the session was opening, in the session transaction', async () => {
      const { tenant, user, credentials } = await portalUser(app.current)
      // The suspension holds the user's row until released, so the login reads the user ACTIVE, proves the password
      // and then waits in the session statement, which finds the user SUSPENDED once the suspension commits.
      const suspension = await holdLocks((trx) =>
        trx.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', user.id).execute(),
      )
      const { address, requestId, extras } = traced(unique('req-race'))
      const pending = login(app.current, credentials, extras)
      await until(async () => (await blockedBy(suspension.pid)).some((session) => /svc_login_open_session/.test(session.query)))
      await suspension.release()
      expectProblem((await pending).response, 403, 'AUTH_015')

      const event = await theAuditEvent(tenant, 'LOGIN_FAILED')
      expect(event).toMatchObject({ actorId: null, targetType: 'USER', targetId: String(user.id), requestId, ipAddress: address })
      expect(event.details).toEqual({ reason: 'USER_NOT_ACTIVE' })
      expect(await storedAuditEvents(tenant, 'LOGIN_SUCCEEDED')).toEqual([])
      expect(await owner().selectFrom('sessions').select('sid').where('userId', '=', user.id).execute()).toEqual([])
    })

    it('writes nothing for a login id that names no user, nor for a customId that names no tenant', async () => {
      const tenant = await createTenant()
      const ghost = traced(unique('req-ghost'))
      const unknownUser = { userLoginId: unique('ghost'), password: strongPassword(), customId: tenant.customId }
      expectProblem((await login(app.current, unknownUser, ghost.extras)).response, 401, 'AUTH_001')
      expect(await storedAuditEvents(tenant)).toEqual([])
      expect(await eventsOfRequest(ghost.requestId)).toEqual([])

      const nowhere = traced(unique('req-nowhere'))
      const unknownTenant = { userLoginId: unique('ghost'), password: strongPassword(), customId: unique('NOPE') }
      expectProblem((await login(app.current, unknownTenant, nowhere.extras)).response, 401, 'AUTH_001')
      const rootGhost = traced(unique('req-root-ghost'))
      expectProblem((await login(app.current, { userLoginId: unique('ghost'), password: strongPassword() }, rootGhost.extras)).response, 401, 'AUTH_001')
      expect(await eventsOfRequest(nowhere.requestId)).toEqual([])
      expect(await eventsOfRequest(rootGhost.requestId)).toEqual([])
    })
  })

  describe('LOGIN_LOCKED', () => {
    it(`records the failure that starts the lock (failure number ${MAX_FAILURES}), with when it ends and the count`, async () => {
      const { tenant, user, credentials } = await portalUser(app.current)
      const wrong = { ...credentials, password: strongPassword() }
      const attempts = Array.from({ length: MAX_FAILURES }, (_, index) => traced(unique(`req-guess-${index}`)))
      for (const attempt of attempts) expectProblem((await login(app.current, wrong, attempt.extras)).response, 401, 'AUTH_001')

      const failures = await storedAuditEvents(tenant, 'LOGIN_FAILED')
      expect(failures.map((event) => event.requestId)).toEqual(attempts.map((attempt) => attempt.requestId))
      const last = attempts.at(-1)!
      const locked = await theAuditEvent(tenant, 'LOGIN_LOCKED')
      const counter = await owner()
        .selectFrom('userLoginFailures')
        .select(['lockedUntil', 'failures'])
        .where('userId', '=', user.id)
        .executeTakeFirstOrThrow()
      expect(locked).toMatchObject({
        actorId: null,
        targetType: 'USER',
        targetId: String(user.id),
        requestId: last.requestId,
        ipAddress: last.address,
      })
      expect(locked.details).toEqual({ lockedUntil: counter.lockedUntil!.toISOString(), failures: MAX_FAILURES })
      // Stamped in the transaction that set the lock: both times are that transaction's now().
      const lockEnds = new Date(String(locked.details.lockedUntil)).getTime()
      expect(lockEnds - locked.occurredAt.getTime()).toBe(LOCK_SECONDS * 1000)
      expectNoSecret(locked, wrong.password)

      // A refused attempt during the lock is no new failure and starts no new lock.
      expectLocked((await login(app.current, credentials)).response)
      expect(await storedAuditEvents(tenant, 'LOGIN_LOCKED')).toHaveLength(1)
      expect(await storedAuditEvents(tenant, 'LOGIN_FAILED')).toHaveLength(MAX_FAILURES)
    })

    it('records no lock while the failures stay under the limit', async () => {
      const { tenant, credentials } = await portalUser(app.current)
      for (let attempt = 1; attempt < MAX_FAILURES; attempt++) {
        expectProblem((await login(app.current, { ...credentials, password: strongPassword() })).response, 401, 'AUTH_001')
      }
      expect(await storedAuditEvents(tenant, 'LOGIN_FAILED')).toHaveLength(MAX_FAILURES - 1)
      expect(await storedAuditEvents(tenant, 'LOGIN_LOCKED')).toEqual([])
    })
  })

  describe('USER_CREATED on registration', () => {
    it('records a student joining, with no actor and the role, without the password', async () => {
      const tenant = await createTenant()
      const { address, requestId, extras } = traced(unique('req-join'))
      const joined = await registerStudent(app.current, tenant.slug, {}, extras)
      expect(joined.response.statusCode).toBe(201)

      const event = await theAuditEvent(tenant, 'USER_CREATED')
      expect(event).toMatchObject({
        actorId: null,
        targetType: 'USER',
        targetId: String(joined.user.id),
        requestId,
        ipAddress: address,
      })
      expect(event.details).toEqual({ role: 'STUDENT' })
      expectNoSecret(event, joined.password)
      // A registration opens a session, but is no login.
      expect(await storedAuditEvents(tenant, 'LOGIN_SUCCEEDED')).toEqual([])
    })

    it("records the owner of a new academy as the first event of the academy's log", async () => {
      const { address, requestId, extras } = traced(unique('req-owner'))
      const registered = await registerOwner(app.current, {}, extras)
      expect(registered.response.statusCode).toBe(201)

      const events = await storedAuditEvents({ id: registered.user.tenantId })
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({
        type: 'USER_CREATED',
        actorId: null,
        targetType: 'USER',
        targetId: String(registered.user.id),
        requestId,
        ipAddress: address,
      })
      expect(events[0]!.details).toEqual({ role: 'OWNER' })
      expectNoSecret(events[0]!, registered.password)
    })

    it('writes nothing for a refused registration', async () => {
      const first = await registerOwner(app.current)
      const sameNumber = traced(unique('req-dup-number'))
      const refused = await registerOwner(app.current, { businessRegistrationNumber: first.businessNumber }, sameNumber.extras)
      expectProblem(refused.response, 409, 'AUTH_019')
      const tenant = await createTenant()
      const taken = traced(unique('req-dup-login'))
      const student = await registerStudent(app.current, tenant.slug)
      expectProblem((await registerStudent(app.current, tenant.slug, { userLoginId: student.loginId }, taken.extras)).response, 409, 'AUTH_011')
      const weak = traced(unique('req-weak'))
      expectProblem((await registerStudent(app.current, tenant.slug, { password: 'password' }, weak.extras)).response, 400, 'AUTH_012')

      for (const request of [sameNumber, taken, weak]) expect(await eventsOfRequest(request.requestId)).toEqual([])
      expect(await storedAuditEvents(tenant, 'USER_CREATED')).toHaveLength(1)
    })
  })

  describe('tenants', () => {
    it("never shows one academy's sign-in events to another, even for the same login id", async () => {
      const { a, b, inA, inB } = await sameLoginIdInTwoTenants('twin')
      expect((await login(app.current, { userLoginId: inA.userLoginId, password: inA.password, customId: a.customId })).response.statusCode).toBe(200)
      expectProblem((await login(app.current, { userLoginId: inA.userLoginId, password: inB.password, customId: a.customId })).response, 401, 'AUTH_001')

      expect((await storedAuditEvents(a)).map((event) => [event.type, event.targetId])).toEqual([
        ['LOGIN_SUCCEEDED', String(inA.id)],
        ['LOGIN_FAILED', String(inA.id)],
      ])
      expect(await storedAuditEvents(b)).toEqual([])
      await expectApiShows(a, ['LOGIN_FAILED', 'LOGIN_SUCCEEDED'])
      await expectApiShows(b, [])
    })
  })

  /** What GET /v1/audit-events answers the academy's owner: the API reads under the tenant's RLS. */
  async function expectApiShows(tenant: TenantRow, types: string[]) {
    const ownerUser = await insertUserWithPassword(tenant, { role: 'OWNER' })
    const signedIn = await login(app.current, { userLoginId: ownerUser.userLoginId, password: ownerUser.password, customId: tenant.customId })
    expect(signedIn.response.statusCode).toBe(200)
    const response = await app.current.inject({ method: 'GET', url: '/v1/audit-events', headers: signedIn.bearer })
    expect(response.statusCode).toBe(200)
    // The owner's own login is the newest event; the rest are the academy's earlier ones.
    const items = response.json().items as Array<{ type: string; targetId: string }>
    expect(items[0]).toMatchObject({ type: 'LOGIN_SUCCEEDED', targetId: String(ownerUser.id) })
    expect(items.slice(1).map((item) => item.type)).toEqual(types)
  }
})
