import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { assertRecipientCount, MAX_RECIPIENTS, normalizeRecipients } from '../../lib/sms/recipients.js'

function thrownBy(fn: () => unknown): AppError {
  try {
    fn()
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error('expected a throw')
}

describe('assertRecipientCount', () => {
  it('accepts 1 to 10,000', () => {
    expect(() => assertRecipientCount(1)).not.toThrow()
    expect(() => assertRecipientCount(MAX_RECIPIENTS)).not.toThrow()
  })

  it('answers RECIPIENTS_REQUIRED for none and TOO_MANY_RECIPIENTS above 10,000', () => {
    expect(thrownBy(() => assertRecipientCount(0)).code).toBe('RECIPIENTS_REQUIRED')
    expect(thrownBy(() => assertRecipientCount(MAX_RECIPIENTS + 1)).code).toBe('TOO_MANY_RECIPIENTS')
  })
})

describe('normalizeRecipients', () => {
  it('stores phones as national digits and absent fields as null', () => {
    expect(normalizeRecipients([{ phone: '+82 10-1234-5678', name: 'Kim' }, { phone: '02-1234-5678', studentId: 3, recipientRole: 'GUARDIAN' }])).toEqual([
      { phone: '01012345678', name: 'Kim', studentId: null, className: null, recipientRole: null },
      { phone: '0212345678', name: null, studentId: 3, className: null, recipientRole: 'GUARDIAN' },
    ])
  })

  it('names the index of the first invalid phone and never echoes the number', () => {
    const error = thrownBy(() => normalizeRecipients([{ phone: '010-1234-5678' }, { phone: '010-99' }, { phone: 'x' }]))
    expect(error.code).toBe('INVALID_PHONE_NUMBER')
    expect(error.detail).toBe('recipients[1].phone is not a valid phone number.')
    expect(error.extra.errors).toEqual([{ field: 'recipients[1].phone', message: 'is not a valid phone number' }])
  })

  it('lets the caller say where a phone came from', () => {
    const error = thrownBy(() => normalizeRecipients([{ phone: 'x' }], (index) => `guardian phone #${index}`))
    expect(error.detail).toBe('guardian phone #0 is not a valid phone number.')
  })
})
