import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { registerOwner, registerStudent } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

describe('upgraded databases', () => {
  const app = useTestApp()

  it('tolerate the legacy users.oauth_provider column: never read, never written, never in a response', async () => {
    await sql`alter table users add column if not exists oauth_provider varchar(20)`.execute(owner())
    const registered = await registerOwner(app.current)
    expect(registered.response.statusCode).toBe(201)
    const student = await registerStudent(app.current, registered.user.tenantSlug)
    expect(student.response.statusCode).toBe(201)
    const me = await app.current.inject({ method: 'GET', url: '/v1/me', headers: student.bearer })
    expect(me.statusCode).toBe(200)
    expect(Object.keys(me.json())).not.toContain('oauthProvider')
    const { rows } = await sql<{ oauthProvider: string | null }>`
      select oauth_provider from users where id = ${student.user.id}`.execute(owner())
    expect(rows[0]?.oauthProvider).toBeNull()
  })
})
