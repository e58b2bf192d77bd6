import { randomBytes, randomInt } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import type { KyselyPlugin } from 'kysely'
import { describe, expect, it } from 'vitest'
import { withTenant } from '../../db/tenant-transaction.js'
import { createAuthContract, type AuthContract } from '../../lib/sign-in/contract.js'
import { AppError } from '../../lib/errors.js'
import { checkDigit } from '../../lib/tenancy/business-number.js'
import { expectAppError } from '../support/auth-fixtures.js'
import { createTenant, insertUser, owner, unique, type TenantRow } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

const app = useTestApp()
// Exactly how another module of the service reaches it: from the Fastify instance, no HTTP.
const contract = (): AuthContract => app.current.authContract


const strongPassword = () => `Pw-${randomBytes(6).toString('hex')}-42`
const cookie = (response: LightMyRequestResponse, name: string) =>
  response.cookies.find((entry) => entry.name === name)?.value ?? ''

async function login(body: { userLoginId: string; password: string; customId?: string }, device = 'WEB') {
  const response = await app.current.inject({ method: 'POST', url: '/v1/login', headers: { 'x-device-category': device }, payload: body })
  return { response, access: cookie(response, 'svc_access_token'), refresh: cookie(response, 'svc_refresh_token') }
}

const getMe = (access: string) =>
  app.current.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${access}` } })
const refresh = (token: string) =>
  app.current.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: token } })

/** A staff member created through the contract and signed in for real on two devices (two session rows). */
async function signedInStaff(tenant: TenantRow) {
  const created = await contract().createUser('Park Teacher', null, 'INSTRUCTOR', tenant.id)
  const credentials = { userLoginId: created.userLoginId, password: created.temporaryPassword, customId: tenant.customId }
  const web = await login(credentials, 'WEB')
  const mobile = await login(credentials, 'MOBILE')
  expect([web.response.statusCode, mobile.response.statusCode]).toEqual([200, 200])
  return { ...created, credentials, sessions: [web, mobile] }
}

/** Every session's access token answers AUTH_004 at once and its refresh token AUTH_007. */
async function expectSessionsEnded(sessions: Array<{ access: string; refresh: string }>) {
  for (const session of sessions) {
    const me = await getMe(session.access)
    expect({ status: me.statusCode, code: me.json().code }).toEqual({ status: 401, code: 'AUTH_004' })
    const refreshed = await refresh(session.refresh)
    expect({ status: refreshed.statusCode, code: refreshed.json().code }).toEqual({ status: 401, code: 'AUTH_007' })
  }
}

const revocationReasons = async (tenantId: number) =>
  (await owner().selectFrom('sessionRevocations').select('reason').where('tenantId', '=', tenantId).execute()).map((row) => row.reason)

function validBusinessNumber(): string {
  const first9 = Array.from({ length: 9 }, () => randomInt(10)).join('')
  return `${first9}${checkDigit(first9)}`
}

async function registeredOwner() {
  const userLoginId = unique('owner')
  const password = strongPassword()
  const response = await app.current.inject({
    method: 'POST',
    url: '/v1/register/owner',
    payload: { instituteName: 'Bright Academy', businessRegistrationNumber: validBusinessNumber(), userLoginId, password, name: 'Kim Owner' },
  })
  expect(response.statusCode).toBe(201)
  const user = response.json().user as { id: number; tenantId: number; tenantCustomId: string }
  return { ...user, userLoginId, password, access: cookie(response, 'svc_access_token'), refresh: cookie(response, 'svc_refresh_token') }
}

/** The call shapes other modules use (docs/clients.md#in-process-auth-contract); a module coded against them. */
interface SpecContract {
  validateToken(token: string): Promise<unknown>
  getUserInfo(token: string): Promise<{ id: number; email: string; name: string; role: string; tenantSlug: string; tenantId: number }>
  createUser(
    name: string,
    phone: string | null,
    role: 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT',
    tenantId: number,
  ): Promise<{ userId: number; userLoginId: string; temporaryPassword: string }>
  deleteUser(userId: number): Promise<void>
  resetPassword(userId: number): Promise<string>
  changeLoginId(userId: number, newLoginId: string): Promise<void>
  getAvatarSeeds(userIds: number[]): Promise<Map<number, string>>
}

describe('authContract with the call shapes other modules use', () => {
  it('serves a module written against those call shapes once bound to a tenant context', async () => {
    const tenant = await createTenant()
    const spec: SpecContract = contract().forTenant(tenant.id)

    const created = await spec.createUser('Han Manager', '010-4444-5555', 'MANAGER', tenant.id)
    const credentials = { userLoginId: created.userLoginId, password: created.temporaryPassword, customId: tenant.customId }
    const session = await login(credentials)
    expect(await spec.getUserInfo(session.access)).toMatchObject({ id: created.userId, name: 'Han Manager', tenantId: tenant.id })

    const renamed = unique('spec-renamed')
    await spec.changeLoginId(created.userId, renamed)
    const temporaryPassword = await spec.resetPassword(created.userId)
    expect((await login({ ...credentials, userLoginId: renamed, password: temporaryPassword })).response.statusCode).toBe(200)
    const seeds = await spec.getAvatarSeeds([created.userId])
    expect([...seeds.keys()]).toEqual([created.userId])
    await spec.deleteUser(created.userId)
    expect((await owner().selectFrom('users').select('status').where('id', '=', created.userId).executeTakeFirstOrThrow()).status).toBe('DELETED')
  })

  it('creates with the tenant id as the last argument straight from app.authContract', async () => {
    const tenant = await createTenant()
    const created = await contract().createUser('Yoon Teacher', null, 'INSTRUCTOR', tenant.id)
    const row = await owner().selectFrom('users').select(['tenantId', 'name', 'phone', 'role']).where('id', '=', created.userId).executeTakeFirstOrThrow()
    expect(row).toEqual({ tenantId: tenant.id, name: 'Yoon Teacher', phone: null, role: 'INSTRUCTOR' })
  })

  it('refuses createUser into another tenant than the bound one (TENANT_MISMATCH) and creates nothing', async () => {
    const [bound, other] = [await createTenant(), await createTenant()]
    await expectAppError(contract().forTenant(bound.id).createUser('Elsewhere', null, 'STUDENT', other.id), 'TENANT_MISMATCH')
    expect(await owner().selectFrom('users').select('id').where('name', '=', 'Elsewhere').where('tenantId', 'in', [bound.id, other.id]).execute()).toEqual([])
  })
})

describe('authContract.validateToken', () => {
  it('returns the identity of a valid access token', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    const identity = await contract().validateToken(staff.sessions[0]!.access)
    expect(identity).toMatchObject({ userId: staff.userId, tenantId: tenant.id, tenantSlug: tenant.slug, role: 'INSTRUCTOR' })
    expect(identity.sid).toMatch(/^[0-9a-f-]{36}$/)
    expect(identity.expiresAt.getTime()).toBeGreaterThan(Date.now())
  })

  it('answers exactly the published fields (expiresAt, no authority), whatever the HTTP identity carries', async () => {
    const staff = await signedInStaff(await createTenant())
    const identity = await contract().validateToken(staff.sessions[0]!.access)
    expect(Object.keys(identity).sort()).toEqual(['expiresAt', 'jti', 'role', 'sid', 'tenantId', 'tenantSlug', 'userId'])
  })

  it('answers AUTH_003 for a malformed token, a refresh token or a foreign signature', async () => {
    const staff = await signedInStaff(await createTenant())
    await expectAppError(contract().validateToken('not-a-jwt'), 'AUTH_003')
    await expectAppError(contract().validateToken(staff.sessions[0]!.refresh), 'AUTH_003')
    const [header, payload] = staff.sessions[0]!.access.split('.')
    await expectAppError(contract().validateToken(`${header}.${payload}.${'A'.repeat(43)}`), 'AUTH_003')
  })

  it('answers AUTH_004 once the token is revoked (logout)', async () => {
    const staff = await signedInStaff(await createTenant())
    const { access } = staff.sessions[0]!
    const logout = await app.current.inject({ method: 'POST', url: '/v1/logout', headers: { authorization: `Bearer ${access}` } })
    expect(logout.statusCode).toBe(204)
    await expectAppError(contract().validateToken(access), 'AUTH_004')
  })
})

describe('authContract.getUserInfo', () => {
  it('returns id, email (holding the login id), name, role, tenant slug and tenant id', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    expect(await contract().getUserInfo(staff.sessions[1]!.access)).toEqual({
      id: staff.userId,
      email: staff.userLoginId,
      name: 'Park Teacher',
      role: 'INSTRUCTOR',
      tenantSlug: tenant.slug,
      tenantId: tenant.id,
    })
  })

  it('refuses invalid and revoked tokens like validateToken', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    await expectAppError(contract().getUserInfo('x.y.z'), 'AUTH_003')
    await contract().forTenant(tenant.id).deleteUser(staff.userId)
    await expectAppError(contract().getUserInfo(staff.sessions[0]!.access), 'AUTH_004')
  })
})

describe('authContract.createUser', () => {
  it('creates a user with a generated login id and a temporary password that signs in', async () => {
    const tenant = await createTenant()
    const created = await contract().createUser('Choi Manager', '010-2222-3333', 'MANAGER', tenant.id)

    expect(created.userLoginId).toMatch(/^manager-[a-z0-9]{8}$/)
    expect(created.temporaryPassword).toMatch(/^[A-Za-z0-9]{16}$/)
    const row = await owner().selectFrom('users').select(['tenantId', 'name', 'phone', 'role', 'status', 'passwordHash']).where('id', '=', created.userId).executeTakeFirstOrThrow()
    expect(row).toMatchObject({ tenantId: tenant.id, name: 'Choi Manager', phone: '01022223333', role: 'MANAGER', status: 'ACTIVE' })
    expect(row.passwordHash).not.toContain(created.temporaryPassword)

    const signedIn = await login({ userLoginId: created.userLoginId, password: created.temporaryPassword, customId: tenant.customId })
    expect(signedIn.response.statusCode).toBe(200)
    expect(signedIn.response.json().user).toMatchObject({ id: created.userId, role: 'MANAGER', tenantSlug: tenant.slug })
  })

  it('refuses OWNER, a blank name, an invalid or over-long phone and an unknown tenant with catalog errors', async () => {
    const tenant = await createTenant()
    // The role parameter names every role; OWNER is refused at run time (owners come with their tenant).
    await expectAppError(contract().createUser('Owner', null, 'OWNER', tenant.id), 'VALIDATION_FAILED')
    await expectAppError(contract().createUser('  ', null, 'STUDENT', tenant.id), 'VALIDATION_FAILED')
    await expectAppError(contract().createUser('x'.repeat(101), null, 'STUDENT', tenant.id), 'VALIDATION_FAILED')
    await expectAppError(contract().createUser('Ok', '12345', 'STUDENT', tenant.id), 'INVALID_PHONE_NUMBER')
    await expectAppError(contract().createUser('Ok', '0'.repeat(41), 'STUDENT', tenant.id), 'INVALID_PHONE_NUMBER')
    await expectAppError(contract().createUser('Ok', null, 'STUDENT', 2_000_000_000), 'TENANT_NOT_FOUND')
    const count = await owner().selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).where('tenantId', '=', tenant.id).executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(0)
  })

  it('joins a transaction the caller holds, committing or rolling back with it', async () => {
    const tenant = await createTenant()
    const failure = withTenant(app.current.db, tenant.id, async (trx) => {
      await contract().forTenant({ tenantId: tenant.id, trx }).createUser('Rolled Back', null, 'STUDENT', tenant.id)
      throw new Error('caller fails after the call')
    })
    await expect(failure).rejects.toThrow('caller fails')
    expect(await owner().selectFrom('users').select('id').where('name', '=', 'Rolled Back').where('tenantId', '=', tenant.id).execute()).toEqual([])

    const created = await withTenant(app.current.db, tenant.id, (trx) =>
      contract().forTenant({ tenantId: tenant.id, trx }).createUser('Kept', null, 'STUDENT', tenant.id),
    )
    expect(await owner().selectFrom('users').select('name').where('id', '=', created.userId).executeTakeFirst()).toEqual({ name: 'Kept' })
  })
})

describe('authContract.deleteUser', () => {
  it('sets status DELETED and ends every session at once (USER_DELETED), freeing nothing', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)

    await contract().forTenant(tenant.id).deleteUser(staff.userId)

    await expectSessionsEnded(staff.sessions)
    expect(await revocationReasons(tenant.id)).toEqual(['USER_DELETED', 'USER_DELETED'])
    const row = await owner().selectFrom('users').select(['status', 'userLoginId']).where('id', '=', staff.userId).executeTakeFirstOrThrow()
    expect(row).toEqual({ status: 'DELETED', userLoginId: staff.userLoginId })
    const again = await login(staff.credentials, 'TABLET')
    expect(again.response.json().code).toBe('AUTH_015')
    // The login id stays taken.
    const other = await insertUser(tenant, { role: 'STUDENT' })
    await expectAppError(contract().forTenant(tenant.id).changeLoginId(other.id, staff.userLoginId), 'AUTH_011')
  })

  it('answers NOT_FOUND for a user of another tenant and leaves it alone', async () => {
    const tenantA = await createTenant()
    const victim = await insertUser(await createTenant())
    await expectAppError(contract().forTenant(tenantA.id).deleteUser(victim.id), 'NOT_FOUND')
    expect(await owner().selectFrom('users').select('status').where('id', '=', victim.id).executeTakeFirst()).toEqual({ status: 'ACTIVE' })
  })
})

describe('authContract.resetPassword', () => {
  it('returns a new temporary password and ends every session (PASSWORD_RESET)', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)

    const temporaryPassword = await contract().forTenant(tenant.id).resetPassword(staff.userId)

    expect(temporaryPassword).toMatch(/^[A-Za-z0-9]{16}$/)
    expect(temporaryPassword).not.toBe(staff.temporaryPassword)
    await expectSessionsEnded(staff.sessions)
    expect(await revocationReasons(tenant.id)).toEqual(['PASSWORD_RESET', 'PASSWORD_RESET'])
    expect((await login(staff.credentials, 'TABLET')).response.json().code).toBe('AUTH_001')
    const withNew = await login({ ...staff.credentials, password: temporaryPassword }, 'TABLET')
    expect(withNew.response.statusCode).toBe(200)
  })

  it('answers NOT_FOUND for a user of another tenant and leaves its password alone', async () => {
    const victim = await insertUser(await createTenant())
    const before = await owner().selectFrom('users').select('passwordHash').where('id', '=', victim.id).executeTakeFirstOrThrow()
    await expectAppError(contract().forTenant((await createTenant()).id).resetPassword(victim.id), 'NOT_FOUND')
    expect(await owner().selectFrom('users').select('passwordHash').where('id', '=', victim.id).executeTakeFirstOrThrow()).toEqual(before)
  })
})

describe('authContract.changeLoginId', () => {
  it('changes a staff login id and ends every session (LOGIN_ID_CHANGED)', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    const newLoginId = unique('renamed')

    await contract().forTenant(tenant.id).changeLoginId(staff.userId, newLoginId)

    await expectSessionsEnded(staff.sessions)
    expect(await revocationReasons(tenant.id)).toEqual(['LOGIN_ID_CHANGED', 'LOGIN_ID_CHANGED'])
    expect((await login(staff.credentials, 'TABLET')).response.json().code).toBe('AUTH_001')
    expect((await login({ ...staff.credentials, userLoginId: newLoginId }, 'TABLET')).response.statusCode).toBe(200)
  })

  it("keeps an owner's directory entry in step, so root-entry login follows the new id", async () => {
    const ownerUser = await registeredOwner()
    const newLoginId = unique('owner-renamed')

    await contract().forTenant(ownerUser.tenantId).changeLoginId(ownerUser.id, newLoginId)

    await expectSessionsEnded([ownerUser])
    const directory = await owner().selectFrom('ownerDirectory').select(['userLoginId', 'userId']).where('tenantId', '=', ownerUser.tenantId).execute()
    expect(directory).toEqual([{ userLoginId: newLoginId, userId: ownerUser.id }])
    expect((await login({ userLoginId: ownerUser.userLoginId, password: ownerUser.password })).response.json().code).toBe('AUTH_001')
    const rootEntry = await login({ userLoginId: newLoginId, password: ownerUser.password })
    expect(rootEntry.response.statusCode).toBe(200)
    expect(rootEntry.response.json().user).toMatchObject({ id: ownerUser.id, role: 'OWNER' })
  })

  it("answers AUTH_011 for an id taken in the tenant, or by any owner for an owner, and changes nothing", async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    const colleague = await insertUser(tenant, { role: 'MANAGER' })
    await expectAppError(contract().forTenant(tenant.id).changeLoginId(staff.userId, colleague.userLoginId), 'AUTH_011')
    // The same id in another tenant is fine for staff.
    const elsewhere = await insertUser(await createTenant())
    await contract().forTenant(tenant.id).changeLoginId(staff.userId, elsewhere.userLoginId)

    const first = await registeredOwner()
    const second = await registeredOwner()
    await expectAppError(contract().forTenant(second.tenantId).changeLoginId(second.id, first.userLoginId), 'AUTH_011')
    expect((await getMe(second.access)).statusCode).toBe(200)
    const row = await owner().selectFrom('users').select('userLoginId').where('id', '=', second.id).executeTakeFirstOrThrow()
    expect(row.userLoginId).toBe(second.userLoginId)
  })

  it('refuses an invalid login id, answers NOT_FOUND across tenants, and keeps sessions when the id is unchanged', async () => {
    const tenant = await createTenant()
    const staff = await signedInStaff(tenant)
    for (const bad of ['', 'has space', 'x'.repeat(51)]) {
      await expectAppError(contract().forTenant(tenant.id).changeLoginId(staff.userId, bad), 'VALIDATION_FAILED')
    }
    await expectAppError(contract().forTenant((await createTenant()).id).changeLoginId(staff.userId, unique('x')), 'NOT_FOUND')
    await contract().forTenant(tenant.id).changeLoginId(staff.userId, staff.userLoginId)
    expect((await getMe(staff.sessions[0]!.access)).statusCode).toBe(200)
  })
})

describe('authContract.getAvatarSeeds', () => {
  it("maps the tenant's user ids to their seeds in one query, leaving out unknown and foreign ids", async () => {
    const tenant = await createTenant()
    const users = await Promise.all([insertUser(tenant), insertUser(tenant), insertUser(tenant)])
    const foreign = await insertUser(await createTenant())
    const seeds = await owner().selectFrom('users').select(['id', 'avatarSeed']).where('tenantId', '=', tenant.id).execute()

    let selects = 0
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        if (args.node.kind === 'SelectQueryNode') selects++
        return args.node
      },
      transformResult: async (args) => args.result,
    }
    const counted = createAuthContract({ ...app.current.authDeps, db: app.current.db.withPlugin(counting) })

    const result = await counted.forTenant(tenant.id).getAvatarSeeds([...users.map((user) => user.id), users[0]!.id, foreign.id, 999_999_999])

    expect(result).toEqual(new Map(seeds.map((row) => [row.id, row.avatarSeed])))
    expect(result.size).toBe(3)
    expect(selects).toBe(1)
    expect(await contract().forTenant(tenant.id).getAvatarSeeds([])).toEqual(new Map())
  })
})
