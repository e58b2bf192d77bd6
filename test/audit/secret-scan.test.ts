import { describe, expect, it } from 'vitest'
import { findSecrets } from '../support/secret-scan.js'

const event = (details: unknown, targetId: string | null = '1') => ({ id: 1, type: 'TEST', targetId, details })

describe('the scan for secrets in audit events', () => {
  it('passes what an event may carry', () => {
    expect(
      findSecrets([
        event({ role: 'OWNER', recipientCount: 30, senderNumber: '010-****-5678', scheduledAt: '2026-11-26T09:00:00.000Z' }),
        event({ changed: ['name', 'content'], previousLoginId: 'kim', reason: 'WRONG_PASSWORD' }, '4f1c2b9e-1111-4a2b-8c3d-123456789abc'),
        event({ lockedUntil: '2026-11-26T09:15:00.000Z', failures: 5, sessionId: '1c7e0a4e-5a4b-4d36-a1d5-2f2a5e0d0b6f' }, '1234567'),
        // An SMS message's id (a month's range of ids starts at yyyymm x 10^10).
        event({ recipientCount: 3 }, '2026110000000123'),
      ]),
    ).toEqual([])
  })

  it.each([
    ['a password key', { password: 'x' }, 'a key that names a credential'],
    ['a nested token key', { session: { refreshToken: 'x' } }, 'a key that names a credential'],
    ['a code key', { code: 'x' }, 'a key that names a credential'],
    ['a JWT', { note: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' }, 'a JWT'],
    ['a bcrypt hash', { note: '$2b$10$abcdefghijklmnopqrstuv' }, 'a bcrypt hash'],
    ['a webhook secret', { note: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, 'a webhook secret'],
    ['a phone with hyphens', { to: '010-1234-5678' }, 'a whole phone number'],
    ['a phone in digits', { to: '01012345678' }, 'a whole phone number'],
    ['a phone in +82 form', { to: '+82 10-1234-5678' }, 'a whole phone number'],
    ['a landline', { senderNumber: '0212345678' }, 'a whole phone number'],
    ['a six-digit code', { note: '042917' }, 'a six-digit code'],
  ])('finds %s', (_name, details, what) => {
    expect(findSecrets([event(details)])).toEqual([expect.stringContaining(what)])
  })

  it('finds a phone number used as a target id', () => {
    expect(findSecrets([event({}, '01099998888')])).toEqual(['event 1 (TEST) targetId: a whole phone number'])
  })
})
