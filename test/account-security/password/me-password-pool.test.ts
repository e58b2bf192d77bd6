import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { hashPassword, bcryptWork } from '../../../lib/sign-in/password-hash.js'
import { expectProblem, strongPassword, type AuthResult } from '../../support/auth-fixtures.js'
import { owner } from '../../support/fixtures.js'
import { buildTestApp, describePostgres, itPostgres } from '../../support/helper.js'
import { portalUser } from '../../sign-in/portal-users.js'

// One pooled connection: a request that held it while bcrypt runs would leave none for anybody else.
describePostgres('POST /v1/me/password holds no pooled connection while bcrypt runs', () => {
  let app: FastifyInstance
  /** For each bcrypt computation as it starts: its kind and how many pooled connections were lent out then. */
  let seen: Array<{ operation: string; lent: number }> = []
  let inProgress = 0
  const onStart = (context: { operation: 'hash' | 'compare' }) => {
    const pool = app.database.poolStats!()
    seen.push({ operation: context.operation, lent: pool.total - pool.idle })
    inProgress++
  }
  const onEnd = () => {
    inProgress--
  }
  const ignore = () => undefined
  // asyncEnd comes once per computation, whether it resolved or failed.
  const subscribers = { start: onStart, end: ignore, asyncStart: ignore, asyncEnd: onEnd, error: ignore }

  beforeAll(async () => {
    app = await buildTestApp({ SVC_DB_POOL_MAX: '1' })
    bcryptWork.subscribe(subscribers)
  })
  afterEach(() => {
    seen = []
  })
  afterAll(async () => {
    bcryptWork.unsubscribe(subscribers)
    await app?.close()
  })

  const changePassword = (signedIn: AuthResult, currentPassword: string, newPassword = strongPassword()) =>
    app.inject({ method: 'POST', url: '/v1/me/password', headers: signedIn.bearer, payload: { currentPassword, newPassword } })

  itPostgres('compares a wrong current password with the connection back in the pool', async () => {
    const { signIn } = await portalUser(app)
    const signedIn = await signIn()
    seen = []
    expectProblem(await changePassword(signedIn, strongPassword()), 400, 'AUTH_013')
    expect(seen).toEqual([{ operation: 'compare', lent: 0 }])
  })

  itPostgres('compares the current password and hashes the new one with the connection back in the pool', async () => {
    const { credentials, signIn } = await portalUser(app)
    const signedIn = await signIn()
    seen = []
    expect((await changePassword(signedIn, credentials.password)).statusCode).toBe(204)
    expect(seen).toEqual([
      { operation: 'compare', lent: 0 },
      { operation: 'hash', lent: 0 },
    ])
  })

  itPostgres("answers another user's GET /v1/me while simultaneous wrong password changes are still hashing", async () => {
    const { user, signIn } = await portalUser(app)
    const attacker = await signIn()
    const bystander = await (await portalUser(app)).signIn()
    // Slow comparisons (cost 10, as in production), so they are still running when the other request is answered
    // unless it had to queue behind them for the only connection.
    await owner()
      .updateTable('users')
      .set({ passwordHash: await hashPassword(strongPassword(), 10) })
      .where('id', '=', user.id)
      .execute()

    let answered: Promise<{ statusCode: number; body: string; hashingWhenAnswered: number }> | undefined
    const startBystander = () => {
      answered ??= app
        .inject({ method: 'GET', url: '/v1/me', headers: bystander.bearer })
        .then((response) => ({ statusCode: response.statusCode, body: response.body, hashingWhenAnswered: inProgress }))
    }
    bcryptWork.start.subscribe(startBystander)
    try {
      const guesses = await Promise.all(Array.from({ length: 4 }, () => changePassword(attacker, strongPassword())))
      for (const guess of guesses) expectProblem(guess, 400, 'AUTH_013')
    } finally {
      bcryptWork.start.unsubscribe(startBystander)
    }
    const bystanderAnswer = await answered!
    expect(bystanderAnswer.statusCode, bystanderAnswer.body).toBe(200)
    expect(bystanderAnswer.hashingWhenAnswered).toBeGreaterThan(0)
  })
})
