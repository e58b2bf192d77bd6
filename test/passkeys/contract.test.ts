import { describe, expect, it } from 'vitest'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { storedAuditEvents } from '../audit/audit-fixtures.js'
import { enrol, PASSKEY_ENV, signedInUser, signInWith } from './passkey-bed.js'

describe('passkeys and the in-process contract', () => {
  const app = useTestApp({ env: PASSKEY_ENV })

  it('deleteUser removes the user\'s passkeys and their directory entries, audited; the passkey signs in no more', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    await enrol(app.current, who)
    await app.current.authContract.forTenant(who.tenant.id).deleteUser(who.user.id)
    expect(await owner().selectFrom('passkeys').select('id').where('userId', '=', who.user.id).execute()).toEqual([])
    expect(await owner().selectFrom('passkeyDirectory').select('userId').where('tenantId', '=', who.tenant.id).execute()).toEqual([])
    const removed = await storedAuditEvents(who.tenant, 'PASSKEY_REMOVED')
    expect(removed.map((event) => event.details)).toEqual([{ reason: 'USER_DELETED', count: 2 }])
    expectProblem(await signInWith(app.current, authenticator), 401, 'AUTH_001')
  })

  it('resetPassword leaves the passkeys: the user signs in with one afterwards', async () => {
    const who = await signedInUser(app.current)
    const { authenticator } = await enrol(app.current, who)
    await app.current.authContract.forTenant(who.tenant.id).resetPassword(who.user.id)
    expect(await owner().selectFrom('passkeys').select('id').where('userId', '=', who.user.id).execute()).toHaveLength(1)
    expect((await signInWith(app.current, authenticator)).statusCode).toBe(200)
  })
})
