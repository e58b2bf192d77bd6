import { sql } from 'kysely'
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createTenant, insertUser, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

// The minute purge (db/functions/svc_purge_expired.sql), as the runtime role calls it: bounded per table and call.
describe('svc_purge_expired', () => {
  const app = useTestApp()
  const purge = async (batch: number) =>
    (await sql<{ purged: number }>`select svc_purge_expired(${batch}::int) as purged`.execute(app.current.db)).rows[0]!.purged

  it('removes at most the batch from a table per call, so a backlog drains over several calls', async () => {
    const expired = Array.from({ length: 5 }, () => randomUUID())
    const live = randomUUID()
    await owner()
      .insertInto('revokedAccessTokens')
      .values([...expired.map((jti) => ({ jti, expiresAt: new Date(Date.now() - 1000) })), { jti: live, expiresAt: new Date(Date.now() + 60_000) }])
      .execute()
    const left = async () =>
      (await owner().selectFrom('revokedAccessTokens').select('jti').where('jti', 'in', [...expired, live]).execute()).map((row) => row.jti)

    await purge(2)
    // Other files' expired tokens may be taken first: at most two of these went.
    expect((await left()).length).toBeGreaterThanOrEqual(4)
    for (let call = 0; call < 50 && (await left()).length > 1; call++) await purge(2)
    expect(await left()).toEqual([live])
  })

  it('purges expired revocation reasons and mfa challenges, keeping live ones', async () => {
    const tenant = await createTenant()
    const user = await insertUser(tenant)
    const [oldSid, liveSid] = [randomUUID(), randomUUID()]
    await owner()
      .insertInto('sessionRevocations')
      .values([
        { tenantId: tenant.id, sid: oldSid, reason: 'LOGOUT', expiresAt: new Date(Date.now() - 1000) },
        { tenantId: tenant.id, sid: liveSid, reason: 'LOGOUT', expiresAt: new Date(Date.now() + 60_000) },
      ])
      .execute()
    await owner()
      .insertInto('mfaChallenges')
      .values([
        { tenantId: tenant.id, tokenHash: `old-${randomUUID()}`, userId: user.id, expiresAt: new Date(Date.now() - 1000) },
        { tenantId: tenant.id, tokenHash: `live-${randomUUID()}`, userId: user.id, expiresAt: new Date(Date.now() + 60_000) },
      ])
      .execute()

    await app.current.purgeExpired()

    const sids = await owner().selectFrom('sessionRevocations').select('sid').where('tenantId', '=', tenant.id).execute()
    expect(sids.map((row) => row.sid)).toEqual([liveSid])
    const challenges = await owner().selectFrom('mfaChallenges').select('tokenHash').where('tenantId', '=', tenant.id).execute()
    expect(challenges.map((row) => row.tokenHash.slice(0, 5))).toEqual(['live-'])
  })
})
