import { describe, expect, it } from 'vitest'
import { expectProblem, insertUserWithPassword, login, registerOwner, registerStudent, strongPassword } from '../support/auth-fixtures.js'
import { createTenant, owner, unique } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { expectLocked, LOCKOUT_SETTINGS, MAX_FAILURES } from './lockout-settings.js'

// An attacker registers a look-alike of the victim's login id and signs in as it between guesses, which used to
// reset the victim's failure counter (failures were keyed on the lower-cased id).
describe('login ids that look alike', () => {

  const app = useTestApp({ env: LOCKOUT_SETTINGS })

  /** A look-alike account that predates the uniqueness rule (the migration keeps such pairs). */
  async function legacyLookalike(tenant: { id: number }, loginId: string) {
    return insertUserWithPassword(tenant, { loginId, legacyLoginKeyDuplicate: true })
  }

  it('a look-alike account signing in between guesses does not reset the victim\'s lockout (portal entry)', async () => {
    const tenant = await createTenant()
    const victimId = unique('demo-student')
    const victim = await insertUserWithPassword(tenant, { loginId: victimId })
    const attacker = await legacyLookalike(tenant, victimId.toUpperCase())
    const wrong = { userLoginId: victimId, password: strongPassword(), customId: tenant.customId }
    for (let round = 0; round < 3; round++) {
      for (let guess = 0; guess < MAX_FAILURES - 1; guess++) {
        const answer = (await login(app.current, wrong)).response
        if (answer.statusCode === 429) break
        expectProblem(answer, 401, 'AUTH_001')
      }
      await login(app.current, { userLoginId: attacker.userLoginId, password: attacker.password, customId: tenant.customId })
    }
    expectLocked((await login(app.current, { userLoginId: victimId, password: victim.password, customId: tenant.customId })).response)
  })

  it('a look-alike owner signing in between guesses does not reset the victim owner\'s lockout (root entry)', async () => {
    const victim = await registerOwner(app.current)
    expect(victim.response.statusCode).toBe(201)
    const lookalikeTenant = await createTenant()
    const attacker = await legacyLookalike(lookalikeTenant, victim.loginId.toUpperCase())
    await owner()
      .insertInto('ownerDirectory')
      .values({ userLoginId: attacker.userLoginId, tenantId: lookalikeTenant.id, userId: attacker.id, legacyLoginKeyDuplicate: true })
      .execute()
    await owner().updateTable('users').set({ role: 'OWNER' }).where('id', '=', attacker.id).execute()
    const wrong = { userLoginId: victim.loginId, password: strongPassword() }
    for (let round = 0; round < 3; round++) {
      for (let guess = 0; guess < MAX_FAILURES - 1; guess++) {
        const answer = (await login(app.current, wrong)).response
        if (answer.statusCode === 429) break
        expectProblem(answer, 401, 'AUTH_001')
      }
      await login(app.current, { userLoginId: attacker.userLoginId, password: attacker.password })
    }
    expectLocked((await login(app.current, { userLoginId: victim.loginId, password: victim.password })).response)
  })

  it('refuses a student registration whose login id equals an existing one after case folding (AUTH_011)', async () => {
    const tenant = await createTenant()
    const victimId = unique('demo-student')
    await insertUserWithPassword(tenant, { loginId: victimId })
    const variants = [
      victimId.toUpperCase(),
      victimId.replace(/^d/, 'D'),
      // Fullwidth letters are the same id after NFKC.
      victimId.replace('demo', '\uff44\uff45\uff4d\uff4f'),
    ]
    for (const userLoginId of variants) {
      expectProblem((await registerStudent(app.current, tenant.slug, { userLoginId })).response, 409, 'AUTH_011')
    }
  })

  it('refuses an owner registration whose login id equals another owner\'s after case folding (AUTH_011)', async () => {
    const victim = await registerOwner(app.current)
    expect(victim.response.statusCode).toBe(201)
    expectProblem((await registerOwner(app.current, { userLoginId: victim.loginId.toUpperCase() })).response, 409, 'AUTH_011')
  })

  it('refuses login ids and names with zero-width, bidi or control characters (VALIDATION_FAILED)', async () => {
    const tenant = await createTenant()
    const base = unique('demo-manager')
    for (const userLoginId of [`${base}\u200b`, `${base}\u202e`, `\u2066${base}`, `${base}\u00ad`, `${base}\u0378`]) {
      expectProblem((await registerStudent(app.current, tenant.slug, { userLoginId })).response, 400, 'VALIDATION_FAILED')
    }
    for (const name of ['Kim\u202eeno', 'Lee\u200bSo', 'Park\u0085']) {
      expectProblem((await registerStudent(app.current, tenant.slug, { name })).response, 400, 'VALIDATION_FAILED')
      expectProblem((await registerOwner(app.current, { name })).response, 400, 'VALIDATION_FAILED')
    }
    expectProblem((await registerOwner(app.current, { userLoginId: `${unique('owner')}\u200b` })).response, 400, 'VALIDATION_FAILED')
  })

  it('still accepts Hangul and accented names and login ids', async () => {
    const tenant = await createTenant()
    const registered = await registerStudent(app.current, tenant.slug, { userLoginId: unique('학생-josé'), name: '김민준 Zoë' })
    expect(registered.response.statusCode).toBe(201)
  })
})

describe('user administration and look-alike login ids', () => {

  const app = useTestApp()

  it('changeLoginId refuses an id that equals another user\'s after NFKC and case folding (AUTH_011)', async () => {
    const tenant = await createTenant()
    const taken = await insertUserWithPassword(tenant, { loginId: unique('taken') })
    const renamed = await insertUserWithPassword(tenant)
    for (const candidate of [taken.userLoginId.toUpperCase(), taken.userLoginId.replace('t', '\uff54')]) {
      await expect(app.current.authContract.forTenant(tenant.id).changeLoginId(renamed.id, candidate)).rejects.toMatchObject({ code: 'AUTH_011' })
    }
  })

  it('changeLoginId refuses zero-width and bidi characters (VALIDATION_FAILED)', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    for (const candidate of [`${unique('x')}\u200b`, `${unique('x')}\u202e`]) {
      await expect(app.current.authContract.forTenant(tenant.id).changeLoginId(user.id, candidate)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
    }
  })

  it('changeLoginId to a case variant of the user\'s own id is allowed', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { loginId: unique('self') })
    await app.current.authContract.forTenant(tenant.id).changeLoginId(user.id, user.userLoginId.toUpperCase())
    const row = await owner().selectFrom('users').select('userLoginId').where('id', '=', user.id).executeTakeFirstOrThrow()
    expect(row.userLoginId).toBe(user.userLoginId.toUpperCase())
  })

  it('createUser refuses names with bidi or zero-width characters (VALIDATION_FAILED)', async () => {
    const tenant = await createTenant()
    for (const name of ['Kim\u202eeno', 'Lee\u200bSo']) {
      await expect(app.current.authContract.createUser(name, null, 'INSTRUCTOR', tenant.id)).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
      })
    }
  })
})
