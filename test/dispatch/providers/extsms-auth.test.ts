import { describe, expect, it } from 'vitest'
import { authorizationHeader, randomSalt, signature } from '../../../lib/dispatch/providers/extsms-auth.js'

describe('extsms authorization header', () => {
  it('matches the test vector of docs/provider.md', () => {
    expect(signature('testSecret', '2025-09-14T12:34:56Z', 'Abc123XYZ789abcdEFGHijklMNOPqr')).toBe(
      '69607016f2059c0bcb97954551ec3a03323ada290e6c98ed1d15b0f34d51b1a1',
    )
  })

  it('builds the header from key, date without milliseconds, salt and signature', () => {
    const header = authorizationHeader(
      'myKey',
      'testSecret',
      new Date('2025-09-14T12:34:56.789Z'),
      'Abc123XYZ789abcdEFGHijklMNOPqr',
    )
    expect(header).toBe(
      'HMAC-SHA256 apiKey=myKey, date=2025-09-14T12:34:56Z, salt=Abc123XYZ789abcdEFGHijklMNOPqr, ' +
        'signature=69607016f2059c0bcb97954551ec3a03323ada290e6c98ed1d15b0f34d51b1a1',
    )
  })

  it('uses a fresh 32-character alphanumeric salt each time', () => {
    const salts = new Set(Array.from({ length: 50 }, () => randomSalt()))
    expect(salts.size).toBe(50)
    for (const salt of salts) expect(salt).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(authorizationHeader('k', 's')).not.toBe(authorizationHeader('k', 's'))
  })
})
