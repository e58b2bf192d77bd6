import { randomBytes, randomInt } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { storedAuditEvents, theAuditEvent, type StoredAuditEvent } from './audit-fixtures.js'
import { decodeJwt, expectAppError, expectProblem, insertUserWithPassword, login, strongPassword, uniqueAddress, type AuthResult } from '../support/auth-fixtures.js'
import { createTenant, owner, unique, type TenantRow } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { LOCKOUT_SETTINGS, MAX_FAILURES } from '../sign-in/lockout-settings.js'

/**
 * The events of a signed-in user's own account (password change, ending sessions) and of the in-process contract
 * (users created, deleted, reset, renamed): who, what, from where, and never a password.
 */
describe('audit events of accounts and sessions', () => {
  const app = useTestApp({ env: LOCKOUT_SETTINGS })

  /** A user of a fresh tenant signed in on each device category given: one session each. */
  async function signedInUser(devices: string[] = ['WEB', 'MOBILE'], tenant?: TenantRow) {
    const academy = tenant ?? (await createTenant())
    // Eight hex digits at most: a run of nine digits in an id is masked in events as a phone number would be, which
    // made the events of an id that happened to hold one differ from the id (one run in about fifty).
    const user = await insertUserWithPassword(academy, { loginId: `user-${randomBytes(4).toString('hex')}x` })
    const credentials = { userLoginId: user.userLoginId, password: user.password, customId: academy.customId }
    const sessions: Array<AuthResult & { sid: string }> = []
    for (const device of devices) {
      const signedIn = await login(app.current, credentials, { headers: { 'x-device-category': device } })
      expect(signedIn.response.statusCode).toBe(200)
      sessions.push({ ...signedIn, sid: String(decodeJwt(signedIn.accessToken).sid) })
    }
    return { tenant: academy, user, credentials, sessions }
  }

  /** A request as `session` that the events must carry back: a request id of the test's own and a fresh address. */
  function asUser(session: AuthResult, method: 'POST' | 'DELETE' | 'PATCH', url: string, payload?: object) {
    const requestId = unique('req')
    const address = uniqueAddress()
    const response = app.current.inject({
      method,
      url,
      payload,
      remoteAddress: address,
      headers: { ...session.bearer, 'x-request-id': requestId },
    })
    return { requestId, address, response }
  }

  /** Every event anywhere that a request wrote, whatever its tenant (read as the owner, past RLS). */
  const eventsOfRequest = (requestId: string) =>
    owner().selectFrom('auditEvents').select(['tenantId', 'type']).where('requestId', '=', requestId).execute()

  const expectNoSecret = (event: StoredAuditEvent, ...secrets: string[]) => {
    for (const secret of secrets) expect(JSON.stringify(event.details)).not.toContain(secret)
  }

  /** Event types the tenant recorded besides the sign-ins that set the test up. */
  const typesAfterSignIn = async (tenant: TenantRow) =>
    (await storedAuditEvents(tenant)).map((event) => event.type).filter((type) => type !== 'LOGIN_SUCCEEDED')

  describe('POST /v1/me/password', () => {
    it('records PASSWORD_CHANGED by the user, with the count of the other sessions it ended', async () => {
      const { tenant, user, credentials, sessions } = await signedInUser(['WEB', 'MOBILE', 'TABLET'])
      const newPassword = strongPassword()
      const change = asUser(sessions[0]!, 'POST', '/v1/me/password', { currentPassword: credentials.password, newPassword })
      expect((await change.response).statusCode).toBe(204)

      const event = await theAuditEvent(tenant, 'PASSWORD_CHANGED')
      expect(event).toMatchObject({
        actorId: user.id,
        targetType: 'USER',
        targetId: String(user.id),
        requestId: change.requestId,
        ipAddress: change.address,
      })
      expect(event.details).toEqual({ endedSessions: 2 })
      expectNoSecret(event, credentials.password, newPassword)
      // The sessions a password change ends are part of the change, not events of their own.
      expect(await typesAfterSignIn(tenant)).toEqual(['PASSWORD_CHANGED'])
    })

    it('records a wrong current password as LOGIN_FAILED of the user, and no PASSWORD_CHANGED', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB'])
      const wrongPassword = strongPassword()
      const newPassword = strongPassword()
      const change = asUser(sessions[0]!, 'POST', '/v1/me/password', { currentPassword: wrongPassword, newPassword })
      expectProblem(await change.response, 400, 'AUTH_013')

      const event = await theAuditEvent(tenant, 'LOGIN_FAILED')
      expect(event).toMatchObject({
        actorId: user.id,
        targetType: 'USER',
        targetId: String(user.id),
        requestId: change.requestId,
        ipAddress: change.address,
      })
      expect(event.details).toEqual({ reason: 'WRONG_CURRENT_PASSWORD' })
      expectNoSecret(event, wrongPassword, newPassword)
      expect(await storedAuditEvents(tenant, 'PASSWORD_CHANGED')).toEqual([])
    })

    it('records LOGIN_LOCKED by the user when wrong current passwords reach the limit', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB'])
      for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
        const change = asUser(sessions[0]!, 'POST', '/v1/me/password', { currentPassword: strongPassword(), newPassword: strongPassword() })
        expectProblem(await change.response, 400, 'AUTH_013')
      }
      const locked = await theAuditEvent(tenant, 'LOGIN_LOCKED')
      expect(locked).toMatchObject({ actorId: user.id, targetType: 'USER', targetId: String(user.id) })
      expect(locked.details).toMatchObject({ failures: MAX_FAILURES })
      expect(await storedAuditEvents(tenant, 'LOGIN_FAILED')).toHaveLength(MAX_FAILURES)
    })

    it('records nothing for a refused change: a new password against the policy, bad input, no token', async () => {
      const { tenant, credentials, sessions } = await signedInUser(['WEB'])
      const weak = asUser(sessions[0]!, 'POST', '/v1/me/password', { currentPassword: credentials.password, newPassword: 'password' })
      expectProblem(await weak.response, 400, 'AUTH_012')
      const malformed = asUser(sessions[0]!, 'POST', '/v1/me/password', { currentPassword: credentials.password })
      expectProblem(await malformed.response, 400, 'VALIDATION_FAILED')
      const anonymous = await app.current.inject({
        method: 'POST',
        url: '/v1/me/password',
        payload: { currentPassword: credentials.password, newPassword: strongPassword() },
      })
      expectProblem(anonymous, 401, 'AUTH_002')
      expect(await typesAfterSignIn(tenant)).toEqual([])
    })
  })

  describe('SESSION_REVOKED', () => {
    it('records DELETE /v1/me/sessions/:sid as the session ended by its user', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB', 'MOBILE'])
      const revoke = asUser(sessions[0]!, 'DELETE', `/v1/me/sessions/${sessions[1]!.sid}`)
      expect((await revoke.response).statusCode).toBe(204)

      const event = await theAuditEvent(tenant, 'SESSION_REVOKED')
      expect(event).toMatchObject({
        actorId: user.id,
        targetType: 'SESSION',
        targetId: sessions[1]!.sid,
        requestId: revoke.requestId,
        ipAddress: revoke.address,
      })
      expect(event.details).toEqual({ reason: 'REVOKED_BY_USER' })
    })

    it("records nothing for a session that is not the caller's, of this tenant or another, or not a session id", async () => {
      const { tenant, sessions } = await signedInUser(['WEB'])
      const neighbour = await signedInUser(['WEB'], tenant)
      const stranger = await signedInUser(['WEB'])
      for (const sid of [neighbour.sessions[0]!.sid, stranger.sessions[0]!.sid]) {
        expectProblem(await asUser(sessions[0]!, 'DELETE', `/v1/me/sessions/${sid}`).response, 404, 'AUTH_014')
      }
      expectProblem(await asUser(sessions[0]!, 'DELETE', '/v1/me/sessions/not-a-session').response, 400, 'VALIDATION_FAILED')
      expect(await storedAuditEvents(tenant, 'SESSION_REVOKED')).toEqual([])
      expect(await storedAuditEvents(stranger.tenant, 'SESSION_REVOKED')).toEqual([])
    })

    it('records DELETE /v1/me/sessions as one event per other session ended', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB', 'MOBILE', 'TABLET'])
      const revoke = asUser(sessions[1]!, 'DELETE', '/v1/me/sessions')
      expect((await revoke.response).statusCode).toBe(204)

      const events = await storedAuditEvents(tenant, 'SESSION_REVOKED')
      expect(events.map((event) => event.targetId).sort()).toEqual([sessions[0]!.sid, sessions[2]!.sid].sort())
      for (const event of events) {
        expect(event).toMatchObject({
          actorId: user.id,
          targetType: 'SESSION',
          requestId: revoke.requestId,
          ipAddress: revoke.address,
          details: { reason: 'REVOKED_BY_USER' },
        })
      }
    })

    it('records POST /v1/logout as the end of the current session', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB', 'MOBILE'])
      const logout = asUser(sessions[1]!, 'POST', '/v1/logout')
      expect((await logout.response).statusCode).toBe(204)

      const event = await theAuditEvent(tenant, 'SESSION_REVOKED')
      expect(event).toMatchObject({
        actorId: user.id,
        targetType: 'SESSION',
        targetId: sessions[1]!.sid,
        requestId: logout.requestId,
        ipAddress: logout.address,
      })
      expect(event.details).toEqual({ reason: 'LOGOUT' })
    })

    it('records POST /v1/logout-all as one event per session of the user', async () => {
      const { tenant, user, sessions } = await signedInUser(['WEB', 'MOBILE'])
      const logout = asUser(sessions[0]!, 'POST', '/v1/logout-all')
      expect((await logout.response).statusCode).toBe(204)

      const events = await storedAuditEvents(tenant, 'SESSION_REVOKED')
      expect(events.map((event) => event.targetId).sort()).toEqual(sessions.map((session) => session.sid).sort())
      for (const event of events) {
        expect(event).toMatchObject({
          actorId: user.id,
          targetType: 'SESSION',
          requestId: logout.requestId,
          ipAddress: logout.address,
          details: { reason: 'LOGOUT_ALL' },
        })
      }
    })

    it('records nothing for a logout without a token', async () => {
      const logout = await app.current.inject({ method: 'POST', url: '/v1/logout', headers: { 'x-request-id': unique('req-anon') } })
      expectProblem(logout, 401, 'AUTH_002')
      expect(await eventsOfRequest(String(logout.headers['x-request-id']))).toEqual([])
    })

    it("never shows one academy's session events to another", async () => {
      const a = await signedInUser(['WEB', 'MOBILE'])
      const b = await signedInUser(['WEB'])
      expect((await asUser(a.sessions[0]!, 'POST', '/v1/logout-all').response).statusCode).toBe(204)
      expect(await storedAuditEvents(a.tenant, 'SESSION_REVOKED')).toHaveLength(2)
      expect(await typesAfterSignIn(b.tenant)).toEqual([])
    })
  })

  describe('PATCH /v1/me', () => {
    it('cannot change the login id, so it records no LOGIN_ID_CHANGED', async () => {
      const { tenant, sessions } = await signedInUser(['WEB'])
      const rename = asUser(sessions[0]!, 'PATCH', '/v1/me', { userLoginId: unique('renamed') })
      expectProblem(await rename.response, 400, 'VALIDATION_FAILED')
      expect(await typesAfterSignIn(tenant)).toEqual([])
    })
  })

  describe('the in-process contract', () => {
    const contract = () => app.current.authContract
    /** Login ids the secret scan can never read as a phone number: letters on both sides of the random part. */
    const newLoginId = () => `renamed-${randomBytes(4).toString('hex')}x`

    /** What the contract records: no actor, no address, no request (its callers are no signed-in user). */
    const NO_ORIGIN_FIELDS = { actorId: null, ipAddress: null, requestId: null }

    it('records USER_CREATED with the role, never the temporary password', async () => {
      const tenant = await createTenant()
      const created = await contract().createUser('Park Teacher', '010-1234-5678', 'INSTRUCTOR', tenant.id)

      const event = await theAuditEvent(tenant, 'USER_CREATED')
      expect(event).toMatchObject({ ...NO_ORIGIN_FIELDS, targetType: 'USER', targetId: String(created.userId) })
      expect(event.details).toEqual({ role: 'INSTRUCTOR' })
      expectNoSecret(event, created.temporaryPassword, '01012345678', '5678')
    })

    it('records nothing when the call fails, or when the transaction it joined rolls back', async () => {
      const tenant = await createTenant()
      await expectAppError(contract().createUser('Ok', '12345', 'STUDENT', tenant.id), 'INVALID_PHONE_NUMBER')
      const joined = withTenant(app.current.db, tenant.id, async (trx) => {
        await contract().forTenant({ tenantId: tenant.id, trx }).createUser('Rolled Back', null, 'STUDENT', tenant.id)
        throw new Error('caller fails after the call')
      })
      await expect(joined).rejects.toThrow('caller fails')
      await expectAppError(contract().forTenant(tenant.id).deleteUser(2_000_000_000), 'NOT_FOUND')
      await expectAppError(contract().forTenant(tenant.id).changeLoginId(2_000_000_000, newLoginId()), 'NOT_FOUND')
      expect(await storedAuditEvents(tenant)).toEqual([])

      const kept = await withTenant(app.current.db, tenant.id, (trx) =>
        contract().forTenant({ tenantId: tenant.id, trx }).createUser('Kept', null, 'STUDENT', tenant.id),
      )
      expect((await theAuditEvent(tenant, 'USER_CREATED')).targetId).toBe(String(kept.userId))
    })

    it('records PASSWORD_RESET with the count of sessions it ended, never the new password', async () => {
      const { tenant, user, credentials } = await signedInUser(['WEB', 'MOBILE'])
      const temporaryPassword = await contract().forTenant(tenant.id).resetPassword(user.id)

      const event = await theAuditEvent(tenant, 'PASSWORD_RESET')
      expect(event).toMatchObject({ ...NO_ORIGIN_FIELDS, targetType: 'USER', targetId: String(user.id) })
      expect(event.details).toEqual({ endedSessions: 2 })
      expectNoSecret(event, temporaryPassword, credentials.password)
      // The sessions a reset ends are part of it, not events of their own.
      expect(await typesAfterSignIn(tenant)).toEqual(['PASSWORD_RESET'])
    })

    it('records USER_DELETED with the count of sessions it ended', async () => {
      const { tenant, user } = await signedInUser(['WEB', 'MOBILE'])
      await contract().forTenant(tenant.id).deleteUser(user.id)

      const event = await theAuditEvent(tenant, 'USER_DELETED')
      expect(event).toMatchObject({ ...NO_ORIGIN_FIELDS, targetType: 'USER', targetId: String(user.id) })
      expect(event.details).toEqual({ endedSessions: 2 })
      expect(await typesAfterSignIn(tenant)).toEqual(['USER_DELETED'])
    })

    it('records LOGIN_ID_CHANGED with both ids; an unchanged or taken id records nothing', async () => {
      const { tenant, user } = await signedInUser(['WEB'])
      const other = await insertUserWithPassword(tenant)
      const renamed = newLoginId()
      await contract().forTenant(tenant.id).changeLoginId(user.id, renamed)

      const event = await theAuditEvent(tenant, 'LOGIN_ID_CHANGED')
      expect(event).toMatchObject({ ...NO_ORIGIN_FIELDS, targetType: 'USER', targetId: String(user.id) })
      expect(event.details).toEqual({ previousLoginId: user.userLoginId, loginId: renamed })

      await contract().forTenant(tenant.id).changeLoginId(user.id, renamed)
      await expectAppError(contract().forTenant(tenant.id).changeLoginId(user.id, other.userLoginId), 'AUTH_011')
      expect(await storedAuditEvents(tenant, 'LOGIN_ID_CHANGED')).toHaveLength(1)
    })

    it('masks a login id that is, or holds, a phone number, as the log masks every number', async () => {
      const tenant = await createTenant()
      const phoneId = `010${randomInt(10_000_000, 100_000_000)}`
      const user = await insertUserWithPassword(tenant, { loginId: phoneId })
      const digits = String(randomInt(10_000_000, 100_000_000))
      const renamed = `kim-010-${digits.slice(0, 4)}-${digits.slice(4)}`
      await contract().forTenant(tenant.id).changeLoginId(user.id, renamed)

      const event = await theAuditEvent(tenant, 'LOGIN_ID_CHANGED')
      expect(event.details).toEqual({ previousLoginId: `010-****-${phoneId.slice(-4)}`, loginId: `kim-010-****-${digits.slice(4)}` })
      expectNoSecret(event, phoneId, renamed, `010${digits}`)
    })

    it("writes each call's event in the tenant it names only", async () => {
      const a = await signedInUser(['WEB'])
      const b = await createTenant()
      await contract().forTenant(a.tenant.id).resetPassword(a.user.id)
      await expectAppError(contract().forTenant(b.id).resetPassword(a.user.id), 'NOT_FOUND')
      await expectAppError(contract().forTenant(b.id).deleteUser(a.user.id), 'NOT_FOUND')
      expect(await storedAuditEvents(a.tenant, 'PASSWORD_RESET')).toHaveLength(1)
      expect(await storedAuditEvents(b)).toEqual([])
    })
  })
})
