import { expect, inject, it } from 'vitest'
import { runScriptSource } from '../support/child-processes.js'
import { createTenant } from '../support/fixtures.js'
import { describePostgres } from '../support/helper.js'
import { uniqueSenderNumber } from '../sms/sender-approval-fixtures.js'
import { setSender } from '../support/sms-send-fixtures.js'

/** Runs scripts/sender-pending.ts in its own process, as `npm run sender:pending` does after the build. */
function senderPending(args: string[] = []) {
  // The runtime role, which owns nothing and cannot bypass RLS: no owner credentials are needed.
  return runScriptSource('scripts/sender-pending.ts', args, { DATABASE_URL: inject('runtimeDatabaseUrl'), DATABASE_MIGRATION_URL: '', NODE_ENV: 'test' })
}

// The script runs in a child process: on the embedded store it would open the directory this process holds.
describePostgres('npm run sender:pending', () => {
  it('lists every tenant with a PENDING sender number as JSON, as the runtime role, and no other', async () => {
    const [first, second, approved, rejected, none] = await Promise.all([1, 2, 3, 4, 5].map(() => createTenant()))
    await setSender(first!, 'PENDING', '0211112222')
    await setSender(second!, 'PENDING', '0233334444')
    await setSender(approved!, 'APPROVED')
    await setSender(rejected!, 'REJECTED')

    const run = await senderPending()

    expect(run).toMatchObject({ code: 0, stderr: '' })
    const listed = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    const ours = listed.filter((row) => [first, second, approved, rejected, none].some((tenant) => tenant!.slug === row.slug))
    expect(ours.map((row) => row.slug).sort()).toEqual([first!.slug, second!.slug].sort())
    expect(ours.find((row) => row.slug === first!.slug)).toEqual({
      slug: first!.slug,
      tenantName: first!.name,
      senderNumber: '0211112222',
      requestedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      inUseBy: null,
    })
  }, 60_000)

  it('names the tenant for which a pending number is already APPROVED, so the operator sees the clash before approving', async () => {
    const [victim, attacker] = await Promise.all([createTenant(), createTenant()])
    const number = uniqueSenderNumber()
    await setSender(victim!, 'APPROVED', number)
    await setSender(attacker!, 'PENDING', number)

    const run = await senderPending()

    expect(run).toMatchObject({ code: 0, stderr: '' })
    const listed = JSON.parse(run.stdout) as Array<Record<string, unknown>>
    expect(listed.filter((row) => row.senderNumber === number)).toEqual([
      expect.objectContaining({ slug: attacker!.slug, senderNumber: number, inUseBy: victim!.slug }),
    ])
  }, 60_000)

  it('exits 1 with a usage line when given arguments', async () => {
    const run = await senderPending(['--all'])
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(run.stderr).toMatch(/^error: usage: npm run sender:pending/)
  }, 60_000)
})
