import { describe, expect, it } from 'vitest'
import type { StoredRecipient } from '../../db/schema.js'
import { alimtalkEstimate, personalise, type AlimtalkDraft } from '../../lib/kakao/alimtalk-send.js'
import { renderAlimtalk } from '../../lib/kakao/template-variables.js'

const recipient = (name: string | null, className: string | null = null): StoredRecipient => ({
  phone: '01012345678',
  name,
  studentId: null,
  className,
  recipientRole: null,
})

const draft = (templateVariables: string[], extra: Partial<AlimtalkDraft> = {}): AlimtalkDraft => ({
  kakaoTemplateId: 1,
  pfId: 'mock-channel',
  providerTemplateId: 'mock-attendance',
  templateVariables,
  variables: {},
  recipientVariables: [],
  fallback: 'SMS',
  ...extra,
})

describe('AlimTalk rendering (lib/kakao/alimtalk-send.ts)', () => {
  it('inserts each value as written, never scanning it again, and leaves an unknown placeholder', () => {
    expect(renderAlimtalk('#{a} and #{b} and #{c}', { a: '#{b}', b: 'B' })).toBe('#{b} and B and #{c}')
  })

  it('finds no value for a variable named after an Object property unless one is given', () => {
    expect(() => personalise('#{constructor}', [recipient('Kim')], draft(['constructor']))).toThrow(/#\{constructor\} has no value for recipient 0/)
    expect(personalise('#{constructor}', [recipient('Kim')], draft(['constructor'], { variables: { constructor: 'x' } }))[0]!.text).toBe('x')
  })

  it('stores only the defaults the template uses and nobody overrode', () => {
    const [first, second] = personalise('#{name} #{className}', [recipient('Kim', 'Math'), recipient('Lee', 'Art')], draft(['name', 'className'], {
      variables: { className: 'All' },
      recipientVariables: [undefined, { className: 'Own' }],
    }))
    expect([first!.variables, first!.text]).toEqual([{ name: 'Kim' }, 'Kim All'])
    expect([second!.variables, second!.text]).toEqual([{ name: 'Lee', className: 'Own' }, 'Lee Own'])
    expect(personalise('#{time}', [recipient('Kim', 'Math')], draft(['time'], { variables: { time: '4' } }))[0]!.variables).toEqual({})
  })

  it('counts characters, not bytes: 1,000 emoji pass, 1,001 do not', () => {
    const of = (count: number) => personalise('#{x}', [recipient(null)], draft(['x'], { variables: { x: '😀'.repeat(count) } }))
    expect(of(1000)[0]!.text).toHaveLength(2000)
    expect(() => of(1001)).toThrow('The rendered AlimTalk is 1001 characters for recipient 0; the limit is 1000 characters.')
  })

  it('prices per recipient and takes the type the fallback would: SMS within 90 EUC-KR bytes, else LMS', () => {
    expect(alimtalkEstimate(['가'.repeat(45), 'short'], 13)).toMatchObject({ messageType: 'SMS', unitPrice: 13, totalPrice: 26, estimatedSegments: 2 })
    expect(alimtalkEstimate(['가'.repeat(46)], 13).messageType).toBe('LMS')
    expect(alimtalkEstimate(['hi 😀'], 13).messageType).toBe('LMS')
  })
})
