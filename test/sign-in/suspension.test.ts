import { describe, expect, it } from 'vitest'
import { expectProblem, insertUserWithPassword, login, refresh, type AuthResult } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { newKey } from '../support/sms-send-fixtures.js'

// After a suspension the access token already issued used to keep working (SMS included) until it expired. Now the
// next request answers AUTH_015 (user) or AUTH_010 (tenant).
describe('suspension of a signed-in user or tenant', () => {
  const app = useTestApp()

  async function signedIn(role: 'OWNER' | 'STUDENT' = 'OWNER') {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { role })
    const result = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
    expect(result.response.statusCode).toBe(200)
    return { tenant, user, ...result }
  }

  const me = (who: Pick<AuthResult, 'bearer'>) => app.current.inject({ method: 'GET', url: '/v1/me', headers: who.bearer })
  const send = (who: Pick<AuthResult, 'bearer'>) =>
    app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...who.bearer, 'idempotency-key': newKey() },
      payload: { title: 'Hi', content: 'Hello', recipients: [{ phone: '010-1234-5678' }] },
    })
  const setUserStatus = (id: number, status: 'ACTIVE' | 'SUSPENDED' | 'DELETED') =>
    owner().updateTable('users').set({ status }).where('id', '=', id).execute()
  const setTenantStatus = (id: number, status: 'ACTIVE' | 'SUSPENDED' | 'CLOSED') =>
    owner().updateTable('tenants').set({ status }).where('id', '=', id).execute()

  it('refuses the existing access token of a suspended user on the next request (AUTH_015)', async () => {
    const who = await signedIn()
    expect((await me(who)).statusCode).toBe(200)
    await setUserStatus(who.user.id, 'SUSPENDED')
    expectProblem(await me(who), 403, 'AUTH_015')
    expectProblem(await send(who), 403, 'AUTH_015')
  })

  it('refuses the existing access token of a deleted user (AUTH_015)', async () => {
    const who = await signedIn()
    await setUserStatus(who.user.id, 'DELETED')
    expectProblem(await me(who), 403, 'AUTH_015')
  })

  it('refuses every token of a suspended or closed tenant, SMS sends included, and creates no message (AUTH_010)', async () => {
    for (const status of ['SUSPENDED', 'CLOSED'] as const) {
      const who = await signedIn()
      expect((await send(who)).statusCode).toBe(201)
      await setTenantStatus(who.tenant.id, status)
      expectProblem(await send(who), 403, 'AUTH_010')
      expectProblem(await me(who), 403, 'AUTH_010')
      const messages = await owner().selectFrom('smsMessages').select('id').where('tenantId', '=', who.tenant.id).execute()
      expect(messages).toHaveLength(1)
    }
  })

  it('answers AUTH_010 before AUTH_015 when both the tenant and the user are suspended', async () => {
    const who = await signedIn()
    await setUserStatus(who.user.id, 'SUSPENDED')
    await setTenantStatus(who.tenant.id, 'SUSPENDED')
    expectProblem(await me(who), 403, 'AUTH_010')
  })

  it('lets the same token in again once the user or tenant is ACTIVE again', async () => {
    const who = await signedIn()
    await setUserStatus(who.user.id, 'SUSPENDED')
    expectProblem(await me(who), 403, 'AUTH_015')
    await setUserStatus(who.user.id, 'ACTIVE')
    expect((await me(who)).statusCode).toBe(200)
  })

  it('refuses the refresh of a suspended user (AUTH_015) or tenant (AUTH_010)', async () => {
    const user = await signedIn('STUDENT')
    await setUserStatus(user.user.id, 'SUSPENDED')
    expectProblem((await refresh(app.current, user.refreshToken)).response, 403, 'AUTH_015')
    const tenant = await signedIn('STUDENT')
    await setTenantStatus(tenant.tenant.id, 'SUSPENDED')
    expectProblem((await refresh(app.current, tenant.refreshToken)).response, 403, 'AUTH_010')
  })

  it('refuses the in-process contract for a suspended user\'s token too', async () => {
    const who = await signedIn()
    await setUserStatus(who.user.id, 'SUSPENDED')
    await expect(app.current.authContract.validateToken(who.accessToken)).rejects.toMatchObject({ code: 'AUTH_015' })
  })
})
