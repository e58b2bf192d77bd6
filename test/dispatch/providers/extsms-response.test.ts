import { describe, expect, it } from 'vitest'
import {
  describeHttpError,
  failureOf,
  matchEntries,
  parseAddAnswer,
  parseGroup,
  parseMessagePage,
} from '../../../lib/dispatch/providers/extsms-response.js'

const recipients = [0, 1, 2].map((recipientIndex) => ({ recipientIndex, to: `0101234500${recipientIndex}` }))
const messageId = (suffix: string) => `M4V20260813185445${suffix.padEnd(15, 'X')}`

function echoed(index: string | undefined, statusCode = '2000', id = messageId(`E${index ?? 'N'}`)) {
  return { messageId: id, statusCode, statusMessage: statusCode === '2000' ? 'accepted' : 'refused', customFields: { svcRecipient: index } }
}

/** An entry as the official SDK declares it: no `customFields` echo, the number and the rest instead. */
function sdkEntry(to: string, id: string, statusCode = '2000') {
  return { messageId: id, statusCode, statusMessage: statusCode === '2000' ? 'accepted' : 'sender not registered', to, from: '0212345678', type: 'SMS', country: '82', accountId: '26081318543200' }
}

describe('matching answer entries to recipients', () => {
  it('reads taken and refused entries by their echo, with their codes and ids', () => {
    expect(matchEntries([echoed('0'), echoed('1', '1062')], recipients)).toEqual([
      { recipientIndex: 0, messageId: messageId('E0'), statusCode: '2000', statusMessage: 'accepted' },
      { recipientIndex: 1, messageId: messageId('E1'), statusCode: '1062', statusMessage: 'refused' },
    ])
  })

  it('ignores entries naming no recipient asked about, junk, and entries without a status code', () => {
    const entries = matchEntries([echoed('7'), echoed('x'), 'junk', null, { customFields: { svcRecipient: '2' } }, echoed('1')], recipients)
    expect(entries.map((entry) => entry.recipientIndex)).toEqual([1])
  })

  it('keeps a recipient listed as both taken and refused as taken, so it is never sent again', () => {
    const entries = matchEntries([echoed('0', '1026'), echoed('0'), echoed('0', '2000', messageId('SECOND'))], recipients)
    expect(entries).toEqual([{ recipientIndex: 0, messageId: messageId('E0'), statusCode: '2000', statusMessage: 'accepted' }])
  })

  it('counts a carrier failure of a sent message as refused, a delivered one as taken', () => {
    const entries = matchEntries([echoed('0', '3043'), echoed('1', '4000'), echoed('2', '3000')], recipients)
    expect(entries.map((entry) => [entry.recipientIndex, entry.statusCode])).toEqual([
      [1, '4000'],
      [2, '3000'],
      [0, '3043'],
    ])
  })

  it('takes the echo as the authority, even over a number that names another recipient', () => {
    const entry = { ...sdkEntry('01012345000', messageId('A')), customFields: { svcRecipient: '1' } }
    expect(matchEntries([entry], recipients).map((each) => each.recipientIndex)).toEqual([1])
  })

  describe('without the echo', () => {
    it('matches an SDK-shaped answer by number: the refused recipient refused, the taken ones taken', () => {
      const list = [sdkEntry('01012345000', messageId('A')), sdkEntry('01012345001', messageId('B'), '1062'), sdkEntry('01012345002', messageId('C'))]
      expect(matchEntries(list, recipients)).toEqual([
        { recipientIndex: 0, messageId: messageId('A'), statusCode: '2000', statusMessage: 'accepted' },
        { recipientIndex: 2, messageId: messageId('C'), statusCode: '2000', statusMessage: 'accepted' },
        { recipientIndex: 1, messageId: messageId('B'), statusCode: '1062', statusMessage: 'sender not registered' },
      ])
    })

    it('matches by number an entry whose echo names no recipient, but not one whose echo names another message', () => {
      const list = [
        { ...sdkEntry('01012345000', messageId('A')), customFields: { svcTenant: 'acme' } },
        { ...sdkEntry('01012345001', messageId('B')), customFields: { svcRecipient: '7' } },
      ]
      expect(matchEntries(list, recipients).map((entry) => [entry.recipientIndex, entry.messageId])).toEqual([[0, messageId('A')]])
    })

    it('leaves a sibling free for a later entry when an entry has no status code', () => {
      const pair = [0, 1].map((recipientIndex) => ({ recipientIndex, to: '01055550000' }))
      const { statusCode: _none, ...noCode } = sdkEntry('01055550000', messageId('A'))
      expect(matchEntries([noCode, sdkEntry('01055550000', messageId('B'), '1062')], pair)).toEqual([
        { recipientIndex: 0, messageId: messageId('B'), statusCode: '1062', statusMessage: 'sender not registered' },
      ])
    })


    const siblings = [0, 1, 2].map((recipientIndex) => ({ recipientIndex, to: '01055550000' }))

    it('matches siblings sharing a phone one entry each, taken entries first', () => {
      const entries = matchEntries([sdkEntry('01055550000', messageId('R'), '1062'), sdkEntry('01055550000', messageId('A')), sdkEntry('01055550000', messageId('B'))], siblings)
      expect(entries.map((entry) => [entry.recipientIndex, entry.messageId, entry.statusCode])).toEqual([
        [0, messageId('A'), '2000'],
        [1, messageId('B'), '2000'],
        [2, messageId('R'), '1062'],
      ])
    })

    it('maps one message id listed twice to one recipient', () => {
      const twice = sdkEntry('01055550000', messageId('A'))
      expect(matchEntries([twice, twice], siblings).map((entry) => entry.recipientIndex)).toEqual([0])
    })

    it('ignores a number that is not among the recipients or empty, and reads a number written with hyphens or spaces', () => {
      expect(matchEntries([sdkEntry('01099999999', messageId('A')), sdkEntry('', messageId('B'))], recipients)).toEqual([])
      const written = [sdkEntry('010-1234-5002', messageId('A')), sdkEntry('010 1234 5000', messageId('B'), '1062')]
      expect(matchEntries(written, recipients).map((entry) => [entry.recipientIndex, entry.statusCode])).toEqual([
        [2, '2000'],
        [0, '1062'],
      ])
    })

    it('reads echoed entries first, so matching by number never takes a recipient an echo names', () => {
      const pair = [0, 1].map((recipientIndex) => ({ recipientIndex, to: '01055550000' }))
      const entries = matchEntries([sdkEntry('01055550000', messageId('N')), echoed('0')], pair)
      expect(entries.map((entry) => [entry.recipientIndex, entry.messageId])).toEqual([
        [0, messageId('E0')],
        [1, messageId('N')],
      ])
    })
  })
})

describe('reading the group API answers', () => {
  it('reads a group object, bare or inside groupInfo, and whether it was sent', () => {
    expect(parseGroup(JSON.stringify({ groupId: 'G4V1', status: 'PENDING' }))).toEqual({ groupId: 'G4V1', sent: false })
    expect(parseGroup(JSON.stringify({ groupInfo: { groupId: 'G4V1', status: 'SENDING' } }))).toEqual({ groupId: 'G4V1', sent: true })
    for (const status of ['COMPLETE', 'FAILED']) expect(parseGroup(JSON.stringify({ groupId: 'G4V1', status }))).toEqual({ groupId: 'G4V1', sent: true })
    for (const text of ['', '<html>', '[]', '{"status":"PENDING"}', '{"groupId":"G4V1"}']) expect(parseGroup(text)).toBeNull()
  })

  it("reads an add call's resultList, and nothing else", () => {
    expect(parseAddAnswer(JSON.stringify({ errorCount: 0, resultList: [echoed('0')] }))).toEqual([echoed('0')])
    for (const text of ['', '{}', '{"resultList":{}}', '[]']) expect(parseAddAnswer(text)).toBeNull()
  })

  it('reads a page of messages keyed by id (or listed), and its next key', () => {
    const page = { startKey: null, nextKey: messageId('NEXT'), limit: 1, messageList: { [messageId('A')]: echoed('0') } }
    expect(parseMessagePage(JSON.stringify(page))).toEqual({ entries: [echoed('0')], nextKey: messageId('NEXT') })
    expect(parseMessagePage(JSON.stringify({ messageList: [echoed('1')], nextKey: null }))).toEqual({ entries: [echoed('1')], nextKey: null })
    expect(parseMessagePage(JSON.stringify({ nextKey: null }))).toEqual({ entries: [], nextKey: null })
    expect(parseMessagePage(JSON.stringify({ messageList: null, nextKey: '' }))).toEqual({ entries: [], nextKey: null })
    expect(parseMessagePage('[]')).toBeNull()
    expect(parseMessagePage(JSON.stringify({ messageList: 'x' }))).toBeNull()
    expect(parseMessagePage('nope')).toBeNull()
  })

  it.each([429, 500, 502, 503, 504])('treats HTTP %i as retryable: the call may have taken effect', (status) => {
    expect(failureOf(status, '').kind).toBe('retryable')
  })

  it.each([301, 400, 401, 402, 403, 404, 409, 413])('treats HTTP %i as a refusal', (status) => {
    expect(failureOf(status, '').kind).toBe('rejected')
  })

  it('quotes the provider error code and message, bounded, and falls back to the status', () => {
    expect(describeHttpError(402, JSON.stringify({ errorCode: 'NotEnoughBalance', errorMessage: 'top up' }))).toBe('NotEnoughBalance: top up (HTTP 402)')
    expect(describeHttpError(500, '<html>')).toBe('HTTP 500')
    expect(describeHttpError(400, JSON.stringify({ errorCode: 'ValidationError', errorMessage: 'x'.repeat(2_000) }))).toHaveLength(500)
  })
})
