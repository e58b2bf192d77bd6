import { describe, expect, it } from 'vitest'
import { createTenant } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { messageRows, newKey } from '../support/sms-send-fixtures.js'
import { expectProblem, signedApproval, TEST_HMAC_SECRET } from '../sms/sms-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

/** `recipients` as an array nested `depth` levels deep, written as text: no object could be serialised that deep. */
const nestedRecipients = (depth: number) =>
  `{"title":"Notice","content":"Hi","recipients":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`

describe('JSON bodies nested too deep', () => {
  const app = useTestApp({ env: { SVC_INTERNAL_HMAC_SECRET: TEST_HMAC_SECRET } })

  it('answers 400 VALIDATION_FAILED, not a 500, for recipients nested 10,000 levels deep, and stores nothing', async () => {
    const { tenant, owner } = await academy(app.current)
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/sms/send',
      headers: { ...owner.headers, 'content-type': 'application/json', 'idempotency-key': newKey() },
      payload: nestedRecipients(10_000),
    })
    const body = expectProblem(response, 400, 'VALIDATION_FAILED')
    expect(body.detail).toMatch(/nested deeper than 64/)
    expect(await messageRows(tenant)).toEqual([])
  })

  it('refuses 65 levels before the route reads it, and lets 64 reach the schema', async () => {
    const { owner } = await academy(app.current)
    const post = (depth: number) =>
      app.current.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...owner.headers, 'content-type': 'application/json', 'idempotency-key': newKey() },
        payload: nestedRecipients(depth),
      })
    expect(expectProblem(await post(65), 400, 'VALIDATION_FAILED').detail).toMatch(/nested deeper than 64/)
    expect(expectProblem(await post(64), 400, 'VALIDATION_FAILED').detail).not.toMatch(/nested deeper/)
  })

  it('answers a signed call nested too deep 401 without a valid signature, and 400 with one', async () => {
    const tenant = await createTenant()
    const body = `{"registrationStatus":"APPROVED","x":${'['.repeat(100)}${']'.repeat(100)}}`
    const unsigned = signedApproval({ slug: tenant.slug, body, secret: 'not-the-secret-0123456789-0123456789' })
    expectProblem(await app.current.inject(unsigned), 401, 'INTERNAL_SIGNATURE_INVALID')
    const signed = await app.current.inject(signedApproval({ slug: tenant.slug, body }))
    expect(expectProblem(signed, 400, 'VALIDATION_FAILED').detail).toMatch(/nested deeper than 64/)
  })
})
