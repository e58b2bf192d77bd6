import { expect, inject, it } from 'vitest'
import { runScriptSource } from '../support/child-processes.js'
import { createTenant, owner } from '../support/fixtures.js'
import { describePostgres, useTestApp } from '../support/helper.js'

const app = useTestApp()
/** Runs scripts/user-create.ts in its own process, as `npm run user:create` does after the build. */
function userCreate(args: string[]) {
  return runScriptSource('scripts/user-create.ts', args, { DATABASE_URL: inject('databaseUrl'), SVC_BCRYPT_COST: '4', NODE_ENV: 'test' })
}

// The script runs in a child process: on the embedded store it would open the directory this process holds, and
// PGlite allows one process per directory.
describePostgres('npm run user:create', () => {
  it('creates a staff account whose printed credentials sign in through the portal', async () => {
    const tenant = await createTenant()

    const run = await userCreate(['--tenant', tenant.slug, '--role', 'INSTRUCTOR', '--name', 'Park Teacher', '--phone', '010-1234-5678'])

    expect(run).toMatchObject({ code: 0, stderr: '' })
    const printed = JSON.parse(run.stdout)
    expect(Object.keys(printed).sort()).toEqual(['temporaryPassword', 'userId', 'userLoginId'])
    const login = await app.current.inject({
      method: 'POST',
      url: '/v1/login',
      payload: { userLoginId: printed.userLoginId, password: printed.temporaryPassword, customId: tenant.customId },
    })
    expect(login.statusCode).toBe(200)
    expect(login.json().user).toMatchObject({ id: printed.userId, name: 'Park Teacher', role: 'INSTRUCTOR', tenantSlug: tenant.slug })
    const row = await owner().selectFrom('users').select(['tenantId', 'phone']).where('id', '=', printed.userId).executeTakeFirstOrThrow()
    expect(row).toEqual({ tenantId: tenant.id, phone: '01012345678' })
  }, 60_000)

  it('accepts MANAGER without a phone', async () => {
    const tenant = await createTenant()
    const run = await userCreate(['--tenant', tenant.slug, '--role', 'manager', '--name', 'Choi Manager'])
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).userLoginId).toMatch(/^manager-/)
  }, 60_000)

  it('exits 1 with a clear message for a bad role, an unknown tenant, an invalid phone or missing options', async () => {
    const tenant = await createTenant()
    const cases: Array<[string[], RegExp]> = [
      [['--tenant', tenant.slug, '--role', 'OWNER', '--name', 'X'], /^error: --role must be one of MANAGER, INSTRUCTOR, STUDENT \(got "OWNER"\)/],
      [['--tenant', tenant.slug, '--role', 'JANITOR', '--name', 'X'], /^error: --role must be one of/],
      [['--tenant', 'no-such-tenant-slug', '--role', 'MANAGER', '--name', 'X'], /^error: no tenant with slug "no-such-tenant-slug"/],
      [['--tenant', tenant.slug, '--role', 'MANAGER', '--name', 'X', '--phone', '12345'], /^error: --phone "12345" is not a valid phone number/],
      [['--tenant', tenant.slug, '--role', 'MANAGER'], /^error: --tenant, --role and --name are required/],
      [['--tenant', tenant.slug, '--role', 'MANAGER', '--name', 'X', '--email', 'x@example.com'], /^error: .*--email/],
    ]
    const runs = await Promise.all(cases.map(([args]) => userCreate(args)))
    runs.forEach((run, index) => {
      expect(run.code).toBe(1)
      expect(run.stdout).toBe('')
      expect(run.stderr).toMatch(cases[index]![1])
    })
    const users = await owner().selectFrom('users').select('id').where('tenantId', '=', tenant.id).execute()
    expect(users).toEqual([])
  }, 90_000)
})
