import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import {
  estimateMessage,
  inferRecipientType,
  renderContent,
  smsByteLength,
  truncateToBytes,
} from '../../lib/sms/sizing.js'

const prices = { sms: 20, lms: 50 }

function thrownBy(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('smsByteLength', () => {
  it('counts ASCII as 1 byte each', () => {
    expect(smsByteLength('hello, world!')).toBe(13)
  })

  it('counts Hangul as 2 bytes each', () => {
    expect(smsByteLength('안녕하세요')).toBe(10)
  })

  it('counts an emoji (a surrogate pair) as 2 bytes', () => {
    expect(smsByteLength('😀')).toBe(2)
    expect(smsByteLength('a😀b')).toBe(4)
  })

  it('counts other non-ASCII characters as 2 bytes', () => {
    expect(smsByteLength('é€ー')).toBe(6)
  })

  it('counts a lone surrogate as 2 bytes', () => {
    expect(smsByteLength('\ud83d')).toBe(2)
    expect(smsByteLength('\ude00x')).toBe(3)
  })

  it('counts the empty string as 0', () => {
    expect(smsByteLength('')).toBe(0)
  })
})

describe('truncateToBytes', () => {
  it('keeps text within the limit unchanged', () => {
    expect(truncateToBytes('notice', 40)).toBe('notice')
  })

  it('never splits a character', () => {
    expect(truncateToBytes('가나다', 5)).toBe('가나')
    expect(truncateToBytes('ab😀', 3)).toBe('ab')
  })
})

describe('renderContent', () => {
  it('replaces name and className', () => {
    expect(renderContent('{name} in {className}: {name}', { name: 'Kim', className: 'Math' })).toBe(
      'Kim in Math: Kim',
    )
  })

  it('keeps unknown placeholders as written', () => {
    expect(renderContent('Hi {name}, {unknown} {Name} {name', { name: 'Lee' })).toBe('Hi Lee, {unknown} {Name} {name')
  })

  it('renders a missing or null value as empty', () => {
    expect(renderContent('[{name}][{className}]', { name: null })).toBe('[][]')
  })

  it('does not expand placeholders inside a value', () => {
    expect(renderContent('{name} / {className}', { name: '{className}', className: 'A' })).toBe('{className} / A')
  })
})

describe('estimateMessage', () => {
  it('is SMS at exactly 90 bytes', () => {
    const estimate = estimateMessage('a'.repeat(90), [{}, {}], prices)
    expect(estimate).toEqual({ messageType: 'SMS', estimatedSegments: 2, unitPrice: 20, totalPrice: 40, maxBytes: 90 })
  })

  it('is LMS at 91 bytes', () => {
    const estimate = estimateMessage('a'.repeat(91), [{}, {}, {}], prices)
    expect(estimate).toEqual({ messageType: 'LMS', estimatedSegments: 3, unitPrice: 50, totalPrice: 150, maxBytes: 91 })
  })

  it('is SMS for 45 Hangul characters and LMS for 46', () => {
    expect(estimateMessage('가'.repeat(45), [{}], prices)).toMatchObject({ messageType: 'SMS', maxBytes: 90 })
    expect(estimateMessage('가'.repeat(46), [{}], prices)).toMatchObject({ messageType: 'LMS', maxBytes: 92 })
  })

  it('counts an emoji as 2 bytes (and never as SMS)', () => {
    expect(estimateMessage(`${'a'.repeat(88)}😀`, [{}], prices)).toMatchObject({ messageType: 'LMS', maxBytes: 90 })
    expect(estimateMessage(`${'a'.repeat(89)}😀`, [{}], prices)).toMatchObject({ messageType: 'LMS', maxBytes: 91 })
  })

  it('accepts exactly 2,000 bytes', () => {
    expect(estimateMessage('가'.repeat(1000), [{}], prices)).toMatchObject({ messageType: 'LMS', maxBytes: 2000 })
  })

  it('rejects 2,001 bytes with CONTENT_TOO_LONG', () => {
    const error = thrownBy(() => estimateMessage(`a${'가'.repeat(1000)}`, [{}], prices))
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).code).toBe('CONTENT_TOO_LONG')
  })

  it('lets the longest personalised rendering decide the type', () => {
    const content = 'Hello {name}, class starts soon.'
    const short = estimateMessage(content, [{ name: 'Kim' }], prices)
    expect(short.messageType).toBe('SMS')
    const long = estimateMessage(content, [{ name: 'Kim' }, { name: '가'.repeat(40) }, { name: 'Lee' }], prices)
    expect(long).toMatchObject({ messageType: 'LMS', unitPrice: 50, totalPrice: 150, estimatedSegments: 3 })
    expect(long.maxBytes).toBe(smsByteLength(renderContent(content, { name: '가'.repeat(40) })))
  })

  it('rejects when only one personalised rendering exceeds 2,000 bytes and names that recipient', () => {
    const content = `${'a'.repeat(1990)}{name}`
    const error = thrownBy(() => estimateMessage(content, [{ name: 'Kim' }, { name: 'x'.repeat(11) }], prices))
    expect((error as AppError).code).toBe('CONTENT_TOO_LONG')
    expect((error as AppError).detail).toContain('recipient 1')
  })

  it('measures a placeholder by its value, not by its own text', () => {
    const estimate = estimateMessage(`${'a'.repeat(85)}{name}{className}`, [{ name: 'Kim' }], prices)
    expect(estimate).toMatchObject({ messageType: 'SMS', maxBytes: 88 })
  })

  it('counts unknown placeholders as literal text', () => {
    expect(estimateMessage('{unknown}', [{ name: 'Kim' }], prices).maxBytes).toBe(9)
  })

  it('agrees with rendering every recipient', () => {
    const content = '{name}님, {className} 수업 안내 {name} {other}'
    const recipients = [
      { name: '홍길동', className: '수학' },
      { name: 'Alexander', className: null },
      { name: '😀😀', className: 'English A' },
    ]
    const longest = Math.max(...recipients.map((recipient) => smsByteLength(renderContent(content, recipient))))
    expect(estimateMessage(content, recipients, prices).maxBytes).toBe(longest)
  })

  it('handles 10,000 recipients', () => {
    const recipients = Array.from({ length: 10_000 }, (_, index) => ({ name: `Student ${index}`, className: 'Math' }))
    const estimate = estimateMessage('Dear parent of {name} ({className})', recipients, prices)
    expect(estimate).toMatchObject({ messageType: 'SMS', estimatedSegments: 10_000, totalPrice: 200_000 })
    expect(estimate.maxBytes).toBe(smsByteLength('Dear parent of Student 9999 (Math)'))
  })

  it('prices no recipients at zero', () => {
    expect(estimateMessage('hi {name}', [], prices)).toEqual({
      messageType: 'SMS',
      estimatedSegments: 0,
      unitPrice: 20,
      totalPrice: 0,
      maxBytes: 3,
    })
  })
})

describe('inferRecipientType', () => {
  it('returns the role every recipient shares', () => {
    expect(inferRecipientType([{ recipientRole: 'GUARDIAN' }, { recipientRole: 'GUARDIAN' }])).toBe('GUARDIAN')
  })

  it('returns CUSTOM for mixed roles', () => {
    expect(inferRecipientType([{ recipientRole: 'GUARDIAN' }, { recipientRole: 'STUDENT' }])).toBe('CUSTOM')
  })

  it('returns CUSTOM when any role is missing, null or blank', () => {
    expect(inferRecipientType([{ recipientRole: 'GUARDIAN' }, {}])).toBe('CUSTOM')
    expect(inferRecipientType([{ recipientRole: null }, { recipientRole: null }])).toBe('CUSTOM')
    expect(inferRecipientType([{ recipientRole: ' ' }, { recipientRole: ' ' }])).toBe('CUSTOM')
  })

  it('returns CUSTOM for no recipients', () => {
    expect(inferRecipientType([])).toBe('CUSTOM')
  })
})

describe('isEucKrText and the SMS/LMS choice', () => {
  it('accepts ASCII, KS X 1001 Hangul and symbols, and refuses emoji and lone surrogates', async () => {
    const { isEucKrText } = await import('../../lib/sms/sizing.js')
    expect(isEucKrText('hello 안녕하세요 ※★')).toBe(true)
    expect(isEucKrText('hi \u{1F600}')).toBe(false)
    expect(isEucKrText('\u2764\uFE0F')).toBe(false)
    expect(isEucKrText('\uFFFD')).toBe(false)
  })

  it('makes LMS of short content with an emoji, in the content or in a rendered name only', () => {
    expect(estimateMessage('ok \u{1F44D}', [{}], prices)).toMatchObject({ messageType: 'LMS', unitPrice: 50 })
    expect(estimateMessage('Hi {name}', [{ name: 'Kim' }, { name: 'Lee \u{1F600}' }], prices).messageType).toBe('LMS')
    expect(estimateMessage('Hi', [{ name: 'Lee \u{1F600}' }], prices).messageType).toBe('SMS')
  })
})
