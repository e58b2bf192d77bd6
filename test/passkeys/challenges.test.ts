import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { creationOptions, PASSKEY_ENV, signedInUser, signInOptions } from './passkey-bed.js'

describe('passkey challenges', () => {
  const app = useTestApp({ env: PASSKEY_ENV })

  it('keep one live enrolment challenge per user: asking again replaces it', async () => {
    const who = await signedInUser(app.current)
    const first = (await creationOptions(app.current, who)).json()
    const second = (await creationOptions(app.current, who)).json()
    expect(second.challenge).not.toBe(first.challenge)
    expect(await owner().selectFrom('passkeyEnrolmentChallenges').select('userId').where('userId', '=', who.user.id).execute()).toHaveLength(1)
  })

  it('are purged every minute once expired, live ones kept', async () => {
    const who = await signedInUser(app.current)
    await creationOptions(app.current, who)
    const stale = (await signInOptions(app.current)).json()
    const live = (await signInOptions(app.current)).json()
    const past = new Date(Date.now() - 1000)
    await owner().updateTable('passkeyEnrolmentChallenges').set({ expiresAt: past }).where('userId', '=', who.user.id).execute()
    await owner().updateTable('passkeySignInChallenges').set({ expiresAt: past }).where('id', '=', stale.challengeId).execute()

    await app.current.purgeExpired()
    expect(await owner().selectFrom('passkeyEnrolmentChallenges').select('userId').where('userId', '=', who.user.id).execute()).toEqual([])
    const left = await owner().selectFrom('passkeySignInChallenges').select('id').where('id', 'in', [stale.challengeId, live.challengeId]).execute()
    expect(left).toEqual([{ id: live.challengeId }])
  })

  it('leave the runtime role no privilege on passkey_directory (a trigger writes it, a function reads one entry)', async () => {
    const denied = await sql`select has_table_privilege('svc_app', 'passkey_directory', 'select') as s,
      has_table_privilege('svc_app', 'passkey_directory', 'insert') as i,
      has_table_privilege('svc_app', 'passkey_directory', 'update') as u,
      has_table_privilege('svc_app', 'passkey_directory', 'delete') as d`.execute(owner())
    expect(denied.rows).toEqual([{ s: false, i: false, u: false, d: false }])
  })
})
