import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { openLoginSession } from '../../db/repos/sign-in/login-session.js'
import type { DeviceCategory, UserStatus } from '../../db/schema.js'
import { withTenant } from '../../db/tenant-transaction.js'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('svc_login_open_session (the session statement of a proven login and of a registration)', () => {
  const app = useTestApp()

  function newSession(userId: number, deviceCategory: DeviceCategory = 'WEB') {
    return {
      sid: randomUUID(),
      userId,
      deviceCategory,
      userAgent: 'test-agent',
      ipAddress: '10.0.0.1',
      accessJti: randomUUID(),
      accessExpiresAt: new Date(Date.now() + 3_600_000),
      refreshJti: randomUUID(),
      refreshExpiresAt: new Date(Date.now() + 86_400_000),
    }
  }

  async function failingKey(tenantId: number, userId: number) {
    const key = { tenantId, userId }
    await owner().insertInto('userLoginFailures').values({ ...key, failures: 3, updatedAt: new Date() }).execute()
    return key
  }

  const failureRows = (key: { tenantId: number; userId: number }) =>
    owner().selectFrom('userLoginFailures').select('failures').where('tenantId', '=', key.tenantId).where('userId', '=', key.userId).execute()
  const sessionsOf = (userId: number) =>
    owner().selectFrom('sessions').select(['sid', 'deviceCategory', 'accessJti']).where('userId', '=', userId).execute()

  it('replaces the session of the same device category: reason kept, access JTI blacklisted, others untouched', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    const key = await failingKey(tenant.id, user.id)
    const mobile = newSession(user.id, 'MOBILE')
    const first = newSession(user.id)
    const second = newSession(user.id)
    for (const session of [mobile, first, second]) {
      const result = await withTenant(app.current.db, tenant.id, (trx) => openLoginSession(trx, true, null, session))
      expect(result).toEqual({ userRole: 'STUDENT', userStatus: 'ACTIVE' })
    }

    const stored = await sessionsOf(user.id)
    expect(stored.map((row) => row.sid).sort()).toEqual([mobile.sid, second.sid].sort())
    const reason = await owner().selectFrom('sessionRevocations').select(['reason', 'expiresAt']).where('sid', '=', first.sid).executeTakeFirstOrThrow()
    expect(reason).toEqual({ reason: 'SESSION_REPLACED_BY_LOGIN', expiresAt: first.refreshExpiresAt })
    const blacklisted = await owner().selectFrom('revokedAccessTokens').select('expiresAt').where('jti', '=', first.accessJti).executeTakeFirstOrThrow()
    expect(blacklisted.expiresAt).toEqual(first.accessExpiresAt)
    expect(await failureRows(key)).toEqual([])
  })

  it.each(['SUSPENDED', 'DELETED'] as UserStatus[])(
    "forgives the user's failed logins but stores nothing for a %s user",
    async (status) => {
      const tenant = await createTenant()
      const user = await insertUser(tenant, { status })
      const key = await failingKey(tenant.id, user.id)
      const result = await withTenant(app.current.db, tenant.id, (trx) => openLoginSession(trx, true, 'not-a-hash', newSession(user.id)))
      expect(result).toEqual({ userRole: 'STUDENT', userStatus: status })
      expect(await sessionsOf(user.id)).toEqual([])
      expect(await failureRows(key)).toEqual([])
      const row = await owner().selectFrom('users').select('passwordHash').where('id', '=', user.id).executeTakeFirstOrThrow()
      expect(row.passwordHash).not.toBe('not-a-hash')
    },
  )

  it('stores the session and forgives nothing when not asked to (a registration)', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    const unrelated = await failingKey(tenant.id, user.id)
    const session = newSession(user.id)
    const result = await withTenant(app.current.db, tenant.id, (trx) => openLoginSession(trx, false, null, session))
    expect(result).toEqual({ userRole: 'STUDENT', userStatus: 'ACTIVE' })
    expect(await sessionsOf(user.id)).toEqual([{ sid: session.sid, deviceCategory: 'WEB', accessJti: session.accessJti }])
    expect(await failureRows(unrelated)).toEqual([{ failures: 3 }])
  })

  it('does not see, lock or write for a user of another tenant', async () => {
    const home = await createTenant()
    const other = await createTenant()
    const user = await insertUser(home)
    const key = await failingKey(home.id, user.id)
    const result = await withTenant(app.current.db, other.id, (trx) => openLoginSession(trx, true, null, newSession(user.id)))
    expect(result).toEqual({ userRole: null, userStatus: null })
    expect(await sessionsOf(user.id)).toEqual([])
    expect(await failureRows(key)).toEqual([{ failures: 3 }])
  })
})
