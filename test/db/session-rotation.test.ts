import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { rotateSessionWithinBudget, type SessionRotation } from '../../db/repos/sign-in/session-rotation.js'
import { withServiceTransaction } from '../../db/tenant-transaction.js'
import { decodeJwt, insertUserWithPassword, login } from '../support/auth-fixtures.js'
import { createTenant } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('svc_rotate_session commit durability', () => {
  const app = useTestApp()

  async function presentedSession(): Promise<SessionRotation['presented']> {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant)
    const { refreshToken } = await login(app.current, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
    const claims = decodeJwt(refreshToken)
    return {
      tenantId: claims.tenant_id as number,
      tenantSlug: claims.tenant_slug as string,
      sid: claims.sid as string,
      userId: Number(claims.sub),
      refreshJti: claims.jti as string,
    }
  }

  function nextTokens(): SessionRotation['next'] {
    const expiresAt = new Date(Date.now() + 3_600_000)
    return { accessJti: randomUUID(), accessExpiresAt: expiresAt, refreshJti: randomUUID(), refreshExpiresAt: expiresAt }
  }

  /** Rotates inside a transaction and reads, in that same transaction, how it is going to commit. */
  async function rotateAndReadCommitMode(presented: SessionRotation['presented']) {
    return withServiceTransaction(app.current.db, async (trx) => {
      const { rotation } = await rotateSessionWithinBudget(trx, { key: `test:${randomUUID()}`, limit: 100 }, {
        presented,
        next: nextTokens(),
        now: new Date(),
        reuseGraceSeconds: 0,
      })
      const { rows } = await sql<{ mode: string }>`select current_setting('synchronous_commit') as mode`.execute(trx)
      return { outcome: rotation?.outcome, mode: rows[0]!.mode }
    })
  }

  it('commits a rotation without waiting for the WAL flush', async () => {
    const presented = await presentedSession()
    expect(await rotateAndReadCommitMode(presented)).toEqual({ outcome: 'ROTATED', mode: 'off' })
  })

  it('keeps the durable commit for a reuse revocation', async () => {
    const presented = await presentedSession()
    await rotateAndReadCommitMode(presented)
    expect(await rotateAndReadCommitMode(presented)).toEqual({ outcome: 'REUSED', mode: 'on' })
  })
})
