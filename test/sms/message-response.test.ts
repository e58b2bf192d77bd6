import { describe, expect, it } from 'vitest'
import { toRecipientResponse } from '../../lib/sms/message-response.js'

describe('toRecipientResponse', () => {
  it('masks the phone as first 3 digits, four asterisks, last 4', () => {
    const recipient = { phone: '01012345678', name: 'Kim', studentId: 1, className: 'A', recipientRole: 'GUARDIAN' }
    expect(toRecipientResponse({ ...recipient, deliveryStatus: 'PENDING' })).toEqual({ ...recipient, phone: '010-****-5678', deliveryStatus: 'PENDING', deliveredVia: null })
    expect(toRecipientResponse({ ...recipient, phone: '0212345678' }).phone).toBe('021-****-5678')
    expect(toRecipientResponse({ ...recipient, phone: '15881234' }).phone).toBe('158-****-1234')
  })

  it('has a null deliveryStatus for group members', () => {
    expect(toRecipientResponse({ phone: '01012345678', name: null, studentId: null, className: null, recipientRole: null }).deliveryStatus).toBeNull()
  })
})
