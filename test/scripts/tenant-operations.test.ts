import { sql } from 'kysely'
import { describe, expect, inject, it } from 'vitest'
import { runScriptSource } from '../support/child-processes.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { owner } from '../support/fixtures.js'
import { buildTestApp, describePostgres, useTestApp } from '../support/helper.js'
import { messageRows, recipients, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

/**
 * Runs scripts/tenant-quota.ts or tenant-status.ts in its own process, as `npm run -s tenant:quota` does after the
 * build, as the owner (DATABASE_MIGRATION_URL): the runtime role may not change tenants.
 */
function script(name: 'tenant-quota' | 'tenant-status', args: string[]) {
  return runScriptSource(`scripts/${name}.ts`, args, {
    DATABASE_URL: inject('runtimeDatabaseUrl'),
    DATABASE_MIGRATION_URL: inject('databaseUrl'),
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
  })
}

const quotaOf = async (tenantId: number) =>
  (await sql<{ quota: number | null }>`select daily_recipient_quota as quota from tenants where id = ${tenantId}`.execute(owner())).rows[0]?.quota

// The scripts run in child processes: on the embedded store they would open the directory this process holds.
describePostgres('npm run tenant:quota and tenant:status', () => {
  // A running instance, with a service default of 5 recipients a day: what the scripts change must reach it at once.
  const app = useTestApp({ env: { SVC_SMS_TENANT_DAILY_RECIPIENTS: '5' } })

  // Each test works in academies of its own, so they run side by side: most of their time is child processes starting.
  describe.concurrent('tenant:quota SLUG N|default', () => {
    it('gives one tenant its own quota, applied by the next send of a running instance, and only to that tenant', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      const other = await academy(app.current)

      expect(await script('tenant-quota', [tenant.slug, '2'])).toMatchObject({ code: 0, stderr: '', stdout: `${JSON.stringify({ slug: tenant.slug, dailyRecipientQuota: 2 })}\n` })

      expectProblem(await send(app.current, sender, { recipients: recipients(3), title: 'T', content: 'Hi' }), 429, 'SMS_QUOTA_EXCEEDED')
      expect((await send(app.current, sender, { recipients: recipients(2), title: 'T', content: 'Hi' })).statusCode).toBe(201)
      expect((await send(app.current, other.owner, { recipients: recipients(5), title: 'T', content: 'Hi' })).statusCode).toBe(201)
    }, 60_000)

    it('lifts the limit for one tenant with 0, and puts the service default back with default', async () => {
      const { tenant, owner: sender } = await academy(app.current)
      expect((await script('tenant-quota', [tenant.slug, '0'])).code).toBe(0)
      expect((await send(app.current, sender, { recipients: recipients(8), title: 'T', content: 'Hi' })).statusCode).toBe(201)

      expect(await script('tenant-quota', [tenant.slug, 'default'])).toMatchObject({ code: 0, stdout: `${JSON.stringify({ slug: tenant.slug, dailyRecipientQuota: null })}\n` })
      expect(await quotaOf(tenant.id)).toBeNull()
      // Today's 8 recipients already pass the default of 5.
      expectProblem(await send(app.current, sender, { recipients: recipients(1), title: 'T', content: 'Hi' }), 429, 'SMS_QUOTA_EXCEEDED')
    }, 60_000)

    it('holds a tenant to its own quota where the service has none (the reservation at commit refuses it)', async () => {
      const unlimited = await buildTestApp({ SVC_SMS_TENANT_DAILY_RECIPIENTS: '0' })
      try {
        const { tenant, owner: sender } = await academy(unlimited)
        expect((await script('tenant-quota', [tenant.slug, '2'])).code).toBe(0)
        expectProblem(await send(unlimited, sender, { recipients: recipients(3), title: 'T', content: 'Hi' }), 429, 'SMS_QUOTA_EXCEEDED')
        expect(await messageRows(tenant)).toHaveLength(0)
        expect((await send(unlimited, sender, { recipients: recipients(2), title: 'T', content: 'Hi' })).statusCode).toBe(201)
      } finally {
        await unlimited.close()
      }
    }, 60_000)

    it.each([['-1'], ['1.5'], ['ten'], ['1e3'], ['1000000001'], ['']])('refuses the quota %j with exit 1 and changes nothing', async (value) => {
      const { tenant } = await academy(app.current)
      const run = await script('tenant-quota', [tenant.slug, value])
      expect(run).toMatchObject({ code: 1, stdout: '' })
      expect(run.stderr).toMatch(/^error: the quota must be a whole number from 0 to 1000000000, or default|^error: usage: npm run -s tenant:quota/)
      expect(await quotaOf(tenant.id)).toBeNull()
    }, 60_000)

    it('names an unknown slug and a wrong argument count', async () => {
      expect(await script('tenant-quota', ['no-such-academy', '5'])).toMatchObject({ code: 1, stdout: '', stderr: 'error: no tenant with slug "no-such-academy"\n' })
      for (const args of [[], ['only-a-slug'], ['slug', '5', 'extra']]) {
        const run = await script('tenant-quota', args)
        expect(run).toMatchObject({ code: 1, stdout: '' })
        expect(run.stderr).toMatch(/^error: usage: npm run -s tenant:quota -- SLUG N\|default/)
      }
    }, 60_000)
  })

  describe.concurrent('tenant:status SLUG ACTIVE|SUSPENDED|CLOSED', () => {
    it('suspends a tenant for the next request of a running instance (AUTH_010), and reactivates it', async () => {
      const { tenant, owner: staff } = await academy(app.current)
      const me = () => app.current.inject({ method: 'GET', url: '/v1/me', headers: staff.headers })
      expect((await me()).statusCode).toBe(200)

      expect(await script('tenant-status', [tenant.slug, 'SUSPENDED'])).toMatchObject({
        code: 0,
        stderr: '',
        stdout: `${JSON.stringify({ slug: tenant.slug, previousStatus: 'ACTIVE', status: 'SUSPENDED' })}\n`,
      })
      expectProblem(await me(), 403, 'AUTH_010')
      expectProblem(await send(app.current, staff, { recipients: recipients(1), title: 'T', content: 'Hi' }), 403, 'AUTH_010')

      expect((await script('tenant-status', [tenant.slug, 'closed'])).stdout).toContain('"status":"CLOSED"')
      expectProblem(await me(), 403, 'AUTH_010')
      expect((await script('tenant-status', [tenant.slug, 'ACTIVE'])).stdout).toContain('"previousStatus":"CLOSED","status":"ACTIVE"')
      expect((await me()).statusCode).toBe(200)
    }, 60_000)

    it('refuses an unknown status or slug with exit 1 and changes nothing', async () => {
      const { tenant, owner: staff } = await academy(app.current)
      const bad = await script('tenant-status', [tenant.slug, 'DELETED'])
      expect(bad).toMatchObject({ code: 1, stdout: '' })
      expect(bad.stderr).toMatch(/^error: the status must be one of ACTIVE, SUSPENDED, CLOSED \(got "DELETED"\)/)
      expect(await script('tenant-status', ['no-such-academy', 'SUSPENDED'])).toMatchObject({ code: 1, stderr: 'error: no tenant with slug "no-such-academy"\n' })
      expect((await app.current.inject({ method: 'GET', url: '/v1/me', headers: staff.headers })).statusCode).toBe(200)
    }, 60_000)
  })
})
