import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  expectProblem,
  insertUserWithPassword,
  login,
  refresh,
  registerOwner,
  registerStudent,
  strongPassword,
  uniqueAddress,
  type Response,
} from '../support/auth-fixtures.js'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { buildTestApp } from '../support/helper.js'
import { inOneRateWindow } from '../support/rate-window.js'
import { expectLocked, LOCK_SECONDS, LOCKOUT_SETTINGS, MAX_FAILURES } from './lockout-settings.js'
import { portalUser, sameLoginIdInTwoTenants } from './portal-users.js'

describe('login lockout per user, and per (tenant, login id) for ids that name no user', () => {
  let app: FastifyInstance
  let sibling: FastifyInstance

  beforeAll(async () => {
    ;[app, sibling] = await Promise.all([buildTestApp(LOCKOUT_SETTINGS), buildTestApp(LOCKOUT_SETTINGS)])
  })
  afterAll(async () => {
    await Promise.all([app?.close(), sibling?.close()])
  })

  async function student() {
    const { tenant, user, credentials: right } = await portalUser(app)
    const wrong = { ...right, password: strongPassword() }
    return { tenant, user, right, wrong }
  }

  it(`locks after ${MAX_FAILURES} failures: every further attempt, even with the right password, answers AUTH_018`, async () => {
    const { right, wrong } = await student()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
    }
    expectLocked((await login(app, right)).response)
    expectLocked((await login(app, wrong)).response)
  })

  it('counts failures of unknown login ids too', async () => {
    const tenant = await createTenant()
    const ghost = { userLoginId: unique('ghost'), password: strongPassword(), customId: tenant.customId }
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem((await login(app, ghost)).response, 401, 'AUTH_001')
    }
    expectLocked((await login(app, ghost)).response)
  })

  it('counts root-entry failures of an owner and locks the owner, on the portal entry too', async () => {
    const registered = await registerOwner(app)
    const wrong = { userLoginId: registered.loginId, password: strongPassword() }
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
    }
    expectLocked((await login(app, { userLoginId: registered.loginId, password: registered.password })).response)
    // One count per user: the portal entry names the same owner.
    const portal = await login(app, {
      userLoginId: registered.loginId,
      password: registered.password,
      customId: registered.user.tenantCustomId,
    })
    expectLocked(portal.response)
  })

  it('resets the count after a successful login', async () => {
    const { right, wrong } = await student()
    for (let round = 0; round < 3; round++) {
      for (let attempt = 0; attempt < MAX_FAILURES - 1; attempt++) {
        expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
      }
      expect((await login(app, right)).response.statusCode).toBe(200)
    }
  })

  it('locks only that login id in that tenant', async () => {
    const { a, b, loginId, inA, inB } = await sameLoginIdInTwoTenants('shared')
    const neighbour = await insertUserWithPassword(a)
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      await login(app, { userLoginId: loginId, password: strongPassword(), customId: a.customId })
    }
    expectLocked((await login(app, { userLoginId: loginId, password: inA.password, customId: a.customId })).response)
    expect((await login(app, { userLoginId: loginId, password: inB.password, customId: b.customId })).response.statusCode).toBe(200)
    expect(
      (await login(app, { userLoginId: neighbour.userLoginId, password: neighbour.password, customId: a.customId })).response.statusCode,
    ).toBe(200)
  })

  it('counts a login id exactly as presented: a case variant is another (unknown) id and never reaches the account', async () => {
    const { right, wrong } = await student()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
      expectProblem((await login(app, { ...wrong, userLoginId: wrong.userLoginId.toUpperCase() })).response, 401, 'AUTH_001')
    }
    expectLocked((await login(app, { ...right, userLoginId: right.userLoginId.toUpperCase() })).response)
    expect((await login(app, right)).response.statusCode).toBe(200)
  })

  it('lets the user in again once the lock has ended', async () => {
    const { tenant, user, right, wrong } = await student()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) await login(app, wrong)
    expectLocked((await login(app, right)).response)
    await owner()
      .updateTable('userLoginFailures')
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where('tenantId', '=', tenant.id)
      .where('userId', '=', user.id)
      .execute()
    expect((await login(app, right)).response.statusCode).toBe(200)
  })

  it('starts counting afresh after a lock has ended', async () => {
    const { tenant, right, wrong } = await student()
    for (let attempt = 0; attempt < MAX_FAILURES; attempt++) await login(app, wrong)
    await owner()
      .updateTable('userLoginFailures')
      .set({ lockedUntil: new Date(Date.now() - 1000) })
      .where('tenantId', '=', tenant.id)
      .execute()
    for (let attempt = 0; attempt < MAX_FAILURES - 1; attempt++) {
      expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
    }
    expect((await login(app, right)).response.statusCode).toBe(200)
  })

  it('does not count the right password of a suspended user as a failure', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { status: 'SUSPENDED' })
    const right = { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }
    for (let attempt = 0; attempt < MAX_FAILURES + 2; attempt++) {
      expectProblem((await login(app, right)).response, 403, 'AUTH_015')
    }
  })

  it('shares the count between instances through PostgreSQL', async () => {
    const { right, wrong } = await student()
    expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
    expectProblem((await login(sibling, wrong)).response, 401, 'AUTH_001')
    expectProblem((await login(app, wrong)).response, 401, 'AUTH_001')
    expectLocked((await login(sibling, right)).response)
  })

  it('lets more simultaneous logins with the right password through than the failure limit', async () => {
    const { right } = await student()
    const results = await Promise.all(Array.from({ length: MAX_FAILURES * 3 }, (_, index) => login(index % 2 ? app : sibling, right)))
    expect(results.map((result) => result.response.statusCode)).toEqual(results.map(() => 200))
  })

  it('recovers a count left behind by attempts that never finished, after a lock period', async () => {
    const { tenant, user, right } = await student()
    await owner()
      .insertInto('userLoginFailures')
      .values({
        tenantId: tenant.id,
        userId: user.id,
        failures: MAX_FAILURES,
        lockedUntil: null,
        updatedAt: new Date(Date.now() - (LOCK_SECONDS + 5) * 1000),
      })
      .execute()
    expect((await login(app, right)).response.statusCode).toBe(200)
  })

  it(`checks at most ${MAX_FAILURES} passwords when wrong guesses arrive all at once`, async () => {
    const { right } = await student()
    const guesses = Array.from({ length: 12 }, () => ({ ...right, password: strongPassword() }))
    const responses = await Promise.all(guesses.map((guess, index) => login(index % 2 ? app : sibling, guess)))
    const statuses = responses.map((result) => result.response.statusCode)
    expect(statuses.filter((status) => status === 401)).toHaveLength(MAX_FAILURES)
    expect(statuses.filter((status) => status === 429)).toHaveLength(guesses.length - MAX_FAILURES)
    expectLocked((await login(app, right)).response)
  })
})

describe('requests per client address', () => {
  const LIMIT = 3
  let app: FastifyInstance
  let sibling: FastifyInstance

  beforeAll(async () => {
    ;[app, sibling] = await Promise.all([
      buildTestApp({ SVC_LOGIN_IP_PER_MINUTE: String(LIMIT) }),
      buildTestApp({ SVC_LOGIN_IP_PER_MINUTE: String(LIMIT) }),
    ])
  })
  afterAll(async () => {
    await Promise.all([app?.close(), sibling?.close()])
  })

  const badLogin = (target: FastifyInstance, remoteAddress: string) =>
    login(target, { userLoginId: unique('nobody'), password: 'irrelevant-1' }, { remoteAddress })

  function expectLimited(response: Response, code: 'AUTH_018' | 'RATE_LIMITED') {
    expectProblem(response, 429, code)
    const retryAfter = Number(response.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
  }

  it('answers AUTH_018 to the login beyond the limit, with Retry-After, even with the right password', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    await inOneRateWindow(owner(), async (address) => {
      for (let request = 0; request < LIMIT; request++) {
        expectProblem((await badLogin(app, address)).response, 401, 'AUTH_001')
      }
      const right = { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }
      expectLimited((await login(app, right, { remoteAddress: address })).response, 'AUTH_018')
      // Another address is not affected.
      expect((await login(app, right, { remoteAddress: uniqueAddress() })).response.statusCode).toBe(200)
    })
  })

  it('answers RATE_LIMITED to registrations beyond the limit', async () => {
    const tenant = await createTenant()
    await inOneRateWindow(owner(), async (address) => {
      for (let request = 0; request < LIMIT; request++) {
        expect((await registerStudent(app, tenant.slug, {}, { remoteAddress: address })).response.statusCode).toBe(201)
      }
      expectLimited((await registerStudent(app, tenant.slug, {}, { remoteAddress: address })).response, 'RATE_LIMITED')
      expectLimited((await registerOwner(app, {}, { remoteAddress: address })).response, 'RATE_LIMITED')
    })
  })

  it('answers RATE_LIMITED to refreshes beyond the limit', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    const signedIn = await login(app, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }, { remoteAddress: uniqueAddress() })
    await inOneRateWindow(owner(), async (address) => {
      for (let request = 0; request < LIMIT; request++) {
        expectProblem((await refresh(app, 'not-a-token', { remoteAddress: address })).response, 401, 'AUTH_006')
      }
      expectLimited((await refresh(app, signedIn.refreshToken, { remoteAddress: address })).response, 'RATE_LIMITED')
    })
    // The refused refresh never reached the session: the token is still current.
    expect((await refresh(app, signedIn.refreshToken, { remoteAddress: uniqueAddress() })).response.statusCode).toBe(200)
  })

  it('shares one budget between login, registration and refresh', async () => {
    const tenant = await createTenant()
    await inOneRateWindow(owner(), async (address) => {
      expectProblem((await badLogin(app, address)).response, 401, 'AUTH_001')
      expect((await registerStudent(app, tenant.slug, {}, { remoteAddress: address })).response.statusCode).toBe(201)
      expectProblem((await refresh(app, 'not-a-token', { remoteAddress: address })).response, 401, 'AUTH_006')
      expectLimited((await badLogin(app, address)).response, 'AUTH_018')
    })
  })

  it('shares the budget between instances through PostgreSQL', async () => {
    await inOneRateWindow(owner(), async (address) => {
      expectProblem((await badLogin(app, address)).response, 401, 'AUTH_001')
      expectProblem((await badLogin(sibling, address)).response, 401, 'AUTH_001')
      expectProblem((await badLogin(app, address)).response, 401, 'AUTH_001')
      expectLimited((await badLogin(sibling, address)).response, 'AUTH_018')
    })
  })

  it('does not count authenticated requests elsewhere', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    await inOneRateWindow(owner(), async (address) => {
      const signedIn = await login(app, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }, { remoteAddress: address })
      for (let request = 0; request < LIMIT + 2; request++) {
        const sessions = await app.inject({ method: 'GET', url: '/v1/me/sessions', headers: signedIn.bearer, remoteAddress: address })
        expect(sessions.statusCode).toBe(200)
      }
    })
  })
})
