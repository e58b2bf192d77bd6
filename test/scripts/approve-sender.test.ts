import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { runProcess } from '../support/child-processes.js'
import { createTenant, owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { formatHyphenated } from '../../lib/sms/phone.js'
import { createPendingSenderTenant, uniqueSenderNumber } from '../sms/sender-approval-fixtures.js'
import { senderRow, TEST_HMAC_SECRET } from '../sms/sms-fixtures.js'

const SCRIPT = fileURLToPath(new URL('../../scripts/approve-sender.sh', import.meta.url))

describe('scripts/approve-sender.sh', () => {
  let baseUrl: string

  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })
  beforeAll(async () => {
    baseUrl = await app.current.listen({ host: '127.0.0.1', port: 0 })
  })

  // Asynchronous on purpose: the server answering the script runs in this process.
  const run = (args: string[], env: Record<string, string | undefined> = {}) => {
    const childEnv = { PATH: process.env.PATH, BASE_URL: baseUrl, SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET, ...env }
    return runProcess('bash', [SCRIPT, ...args], { env: childEnv as NodeJS.ProcessEnv, timeout: 20_000 })
  }

  it('approves: prints the sender setting as JSON and exits 0', async () => {
    const tenant = await createPendingSenderTenant()
    const result = await run([tenant.slug, 'APPROVED', tenant.senderNumber])
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(result.stdout)).toMatchObject({ provider: 'extsms', senderNumber: formatHyphenated(tenant.senderNumber), registrationStatus: 'APPROVED' })
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'APPROVED', version: 1 })
  })

  it('sends the number reviewed: a tenant that changed its number since the listing is refused SENDER_NUMBER_CHANGED, unchanged', async () => {
    const tenant = await createPendingSenderTenant()
    const listed = tenant.senderNumber
    const current = uniqueSenderNumber()
    await owner().updateTable('smsSenderSettings').set({ senderNumber: current, version: 1 }).where('tenantId', '=', tenant.id).execute()
    const result = await run([tenant.slug, 'APPROVED', formatHyphenated(listed)])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('"code":"SENDER_NUMBER_CHANGED"')
    expect(await senderRow(tenant)).toMatchObject({ senderNumber: current, registrationStatus: 'PENDING', approvedAt: null, version: 1 })
  })

  it('rejects with a reason that needs JSON escaping, stored exactly as given', async () => {
    const tenant = await createPendingSenderTenant()
    const reason = 'He said "no" \\ 번호 명의 불일치\nline two\t$HOME `id` & done'
    const result = await run([tenant.slug, 'REJECTED', tenant.senderNumber, reason])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ registrationStatus: 'REJECTED', rejectionReason: reason })
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'REJECTED', rejectionReason: reason })
  })

  it.each([
    ['an unknown tenant', async () => 'no-such-tenant-anywhere', {}, 'TENANT_NOT_FOUND'],
    ['a tenant without a sender setting', async () => (await createTenant()).slug, {}, 'SENDER_SETTING_NOT_FOUND'],
    ['a wrong secret', async () => (await createPendingSenderTenant()).slug, { SVC_INTERNAL_HMAC_SECRET: 'not-the-configured-secret' }, 'INTERNAL_SIGNATURE_INVALID'],
  ])('exits 1 and prints the problem on stderr for %s', async (_case, slug, env, code) => {
    const result = await run([await slug(), 'APPROVED', uniqueSenderNumber()], env)
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(`"code":"${code}"`)
  })

  it.each([
    ['no arguments', [], {}, /usage:/],
    ['APPROVED without the number reviewed', ['SLUG', 'APPROVED'], {}, /usage:/],
    ['an unknown status', ['SLUG', 'PENDING', 'NUMBER'], {}, /usage:/],
    ['too many arguments', ['SLUG', 'REJECTED', 'NUMBER', 'a', 'b'], {}, /usage:/],
    ['REJECTED without a reason', ['SLUG', 'REJECTED', 'NUMBER'], {}, /REJECTED needs a non-blank REASON/],
    ['REJECTED with a blank reason', ['SLUG', 'REJECTED', 'NUMBER', '  '], {}, /REJECTED needs a non-blank REASON/],
    ['a number that is not one', ['SLUG', 'APPROVED', '02-1234-5678"}'], {}, /NUMBER must be the sender number/],
    ['a slug that is not one', ['../../v1/login', 'APPROVED', 'NUMBER'], {}, /SLUG must be a tenant slug/],
    ['no BASE_URL', ['SLUG', 'APPROVED', 'NUMBER'], { BASE_URL: undefined }, /BASE_URL is not set/],
    ['no secret', ['SLUG', 'APPROVED', 'NUMBER'], { SVC_INTERNAL_HMAC_SECRET: undefined }, /SVC_INTERNAL_HMAC_SECRET is not set/],
  ])('exits 2 without sending anything for %s', async (_case, args, env, message) => {
    const tenant = await createPendingSenderTenant()
    const result = await run(args.map((arg) => (arg === 'SLUG' ? tenant.slug : arg === 'NUMBER' ? tenant.senderNumber : arg)), env)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(message)
    expect(await senderRow(tenant)).toMatchObject({ registrationStatus: 'PENDING', version: 0 })
  })

  it('exits non-zero when the service cannot be reached', async () => {
    const result = await run(['some-tenant', 'APPROVED', '0212345678'], { BASE_URL: 'http://127.0.0.1:9' })
    expect(result.code).not.toBe(0)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/request to .* failed/)
  })
})
