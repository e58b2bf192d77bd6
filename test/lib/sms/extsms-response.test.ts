import { describe, expect, it } from 'vitest'
import { classifyResponse, describeHttpError } from '../../../lib/sms/providers/extsms-response.js'

const recipients = [0, 1, 2].map((recipientIndex) => ({ recipientIndex, to: `0101234500${recipientIndex}` }))
const groupInfo = { groupId: 'G4V20260813185432L0UOCCFAV9BAHIX', status: 'SENDING' }

function ok(body: unknown) {
  return classifyResponse(200, JSON.stringify(body), recipients)
}

function accepted(index: string | undefined, messageId = `M4V20260813185445ABCDEFGHIJKLMN${index ?? 'X'}`) {
  return { messageId, statusCode: '2000', statusMessage: 'accepted', customFields: { svcRecipient: index } }
}

describe('extsms response classification', () => {
  it('reads the documented 200 body', () => {
    const result = ok({
      groupInfo,
      messageList: [accepted('0')],
      failedMessageList: [
        {
          to: '01098765432',
          statusCode: '1062',
          statusMessage: 'sender not registered',
          customFields: { svcRecipient: '1' },
        },
      ],
    })
    expect(result).toEqual({
      kind: 'accepted',
      groupId: groupInfo.groupId,
      accepted: [{ recipientIndex: 0, messageId: 'M4V20260813185445ABCDEFGHIJKLMN0', statusCode: '2000' }],
      refused: [{ recipientIndex: 1, statusCode: '1062', statusMessage: 'sender not registered' }],
    })
  })

  it('ignores entries without a recipient index or naming one that was not sent', () => {
    const result = ok({
      groupInfo,
      messageList: [accepted(undefined), accepted('7'), accepted('x'), accepted('1'), 'junk', null],
      failedMessageList: [{ statusCode: '1062', customFields: {} }, { statusCode: '1062' }],
    })
    expect(result).toMatchObject({ kind: 'accepted', accepted: [{ recipientIndex: 1 }], refused: [] })
  })

  it('ignores an accepted entry without a message id and a refusal without a status code', () => {
    const result = ok({
      groupInfo,
      messageList: [{ statusCode: '2000', customFields: { svcRecipient: '0' } }],
      failedMessageList: [{ statusMessage: 'refused', customFields: { svcRecipient: '1' } }],
    })
    expect(result).toMatchObject({ kind: 'accepted', accepted: [], refused: [] })
  })

  it('keeps a recipient listed as both accepted and refused as accepted, so it is never resent', () => {
    const result = ok({
      groupInfo,
      messageList: [accepted('0'), accepted('0', 'M4V20260813185445SECONDIDXXXXXXX')],
      failedMessageList: [{ statusCode: '1026', customFields: { svcRecipient: '0' } }],
    })
    expect(result).toMatchObject({
      kind: 'accepted',
      accepted: [{ recipientIndex: 0, messageId: 'M4V20260813185445ABCDEFGHIJKLMN0' }],
      refused: [],
    })
  })

  it('accepts a body without a group id or lists', () => {
    expect(ok({ groupInfo: {} })).toEqual({ kind: 'accepted', groupId: null, accepted: [], refused: [] })
  })

  it.each([
    ['not JSON', '<html>ok</html>'],
    ['empty', ''],
    ['a JSON array', '[]'],
    ['without groupInfo', '{"messageList":[]}'],
    ['with a messageList that is not an array', JSON.stringify({ groupInfo, messageList: {} })],
  ])('treats a 200 body that is %s as retryable', (_case, text) => {
    expect(classifyResponse(200, text, recipients)).toMatchObject({ kind: 'retryable' })
  })

  it.each([429, 500, 502, 503, 504])('treats HTTP %i as retryable', (status) => {
    expect(classifyResponse(status, '', recipients).kind).toBe('retryable')
  })

  it.each([301, 400, 401, 402, 403, 404, 409, 413])('treats HTTP %i as rejected', (status) => {
    expect(classifyResponse(status, '', recipients).kind).toBe('rejected')
  })
})

/** A 200 answer as the official SDK declares it (docs/provider.md#answers): no `customFields` echo in either list. */
const sdkGroupInfo = {
  groupId: groupInfo.groupId,
  status: 'SENDING',
  count: {
    total: 3,
    sentTotal: 0,
    sentFailed: 0,
    sentSuccess: 0,
    sentPending: 0,
    sentReplacement: 0,
    refund: 0,
    registeredFailed: 1,
    registeredSuccess: 2,
  },
  countForCharge: { sms: { '82': 2 }, lms: {}, mms: {}, ata: {}, cta: {}, cti: {}, nsa: {}, rcs_sms: {}, rcs_lms: {}, rcs_mms: {}, rcs_tpl: {} },
  balance: { requested: 40, replacement: 0, refund: 0, sum: 40 },
  point: { requested: 0, replacement: 0, refund: 0, sum: 0 },
  app: { profit: { sms: 0, lms: 0, mms: 0, ata: 0, cta: 0, cti: 0 }, appId: null, version: null },
  log: [{ createAt: '2026-08-13T18:54:32.123Z', message: 'message group created' }],
  accountId: '26081318543200',
  apiVersion: '4',
  dateCreated: '2026-08-13T18:54:32.123Z',
  dateUpdated: '2026-08-13T18:54:45.456Z',
}

const messageId = (suffix: string) => `M4V20260813185445${suffix.padEnd(15, 'X')}`

function sdkAccepted(to: string, id: string) {
  return { messageId: id, statusCode: '2000', statusMessage: 'accepted', to, from: '0212345678', type: 'SMS', country: '82' }
}

function sdkRefused(to: string, id: string, statusCode = '1062') {
  return {
    to,
    from: '0212345678',
    type: 'SMS',
    country: '82',
    messageId: id,
    statusCode,
    statusMessage: 'sender not registered',
    accountId: sdkGroupInfo.accountId,
  }
}

describe('extsms answers without the customFields echo', () => {
  const sibling = (recipientIndex: number, to = '01055550000') => ({ recipientIndex, to })

  it('matches an SDK-shaped answer by number: the refused recipient is refused, the accepted one accepted', () => {
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [sdkAccepted('01012345000', messageId('A')), sdkAccepted('01012345002', messageId('C'))],
      failedMessageList: [sdkRefused('01012345001', messageId('B'))],
    }

    expect(classifyResponse(200, JSON.stringify(body), recipients)).toEqual({
      kind: 'accepted',
      groupId: groupInfo.groupId,
      accepted: [
        { recipientIndex: 0, messageId: messageId('A'), statusCode: '2000' },
        { recipientIndex: 2, messageId: messageId('C'), statusCode: '2000' },
      ],
      refused: [{ recipientIndex: 1, statusCode: '1062', statusMessage: 'sender not registered' }],
    })
  })

  it('maps two entries for siblings sharing a phone to two distinct recipients', () => {
    const call = [sibling(3), sibling(4), sibling(5, '01012345009')]
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [sdkAccepted('01055550000', messageId('A'))],
      failedMessageList: [sdkRefused('01055550000', messageId('B'), '1026')],
    }

    expect(classifyResponse(200, JSON.stringify(body), call)).toMatchObject({
      accepted: [{ recipientIndex: 3, messageId: messageId('A') }],
      refused: [{ recipientIndex: 4, statusCode: '1026' }],
    })
  })

  it('maps the same message id listed twice to one recipient', () => {
    const call = [sibling(0), sibling(1)]
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [sdkAccepted('01055550000', messageId('A')), sdkAccepted('01055550000', messageId('A'))],
      failedMessageList: [sdkRefused('01055550000', messageId('A'))],
    }

    expect(classifyResponse(200, JSON.stringify(body), call)).toMatchObject({
      accepted: [{ recipientIndex: 0, messageId: messageId('A') }],
      refused: [],
    })
  })

  it('ignores a number that is not among the recipients of the call', () => {
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [sdkAccepted('01099999999', messageId('A'))],
      failedMessageList: [sdkRefused('01099999998', messageId('B')), sdkRefused('', messageId('C'))],
    }

    expect(ok(body)).toMatchObject({ kind: 'accepted', accepted: [], refused: [] })
  })

  it('matches a number written with hyphens', () => {
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [sdkAccepted('010-1234-5002', messageId('A'))],
      failedMessageList: [sdkRefused('010 1234 5000', messageId('B'))],
    }

    expect(ok(body)).toMatchObject({
      accepted: [{ recipientIndex: 2, messageId: messageId('A') }],
      refused: [{ recipientIndex: 0, statusCode: '1062' }],
    })
  })

  it('reads echoed entries first, so matching by number never takes a recipient an echo names', () => {
    const call = [sibling(0), sibling(1), sibling(2, '01012345002')]
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [
        sdkAccepted('01055550000', messageId('A')),
        { ...sdkAccepted('01012345002', messageId('C')), customFields: { svcRecipient: '2' } },
      ],
      failedMessageList: [{ ...sdkRefused('01055550000', messageId('B')), customFields: { svcRecipient: '0' } }],
    }

    expect(classifyResponse(200, JSON.stringify(body), call)).toMatchObject({
      accepted: [
        { recipientIndex: 2, messageId: messageId('C') },
        { recipientIndex: 1, messageId: messageId('A') },
      ],
      refused: [{ recipientIndex: 0, statusCode: '1062' }],
    })
  })

  it('matches by number an entry whose echo names no recipient index, but not one whose echo names another call', () => {
    const body = {
      groupInfo: sdkGroupInfo,
      messageList: [
        { ...sdkAccepted('01012345000', messageId('A')), customFields: { svcTenant: 'acme' } },
        { ...sdkAccepted('01012345001', messageId('B')), customFields: { svcRecipient: '7' } },
      ],
      failedMessageList: [],
    }

    expect(ok(body)).toMatchObject({ accepted: [{ recipientIndex: 0, messageId: messageId('A') }], refused: [] })
  })

  it('leaves the recipient free for a later entry when an entry lacks what it needs', () => {
    const call = [sibling(0), sibling(1)]
    const { statusCode: _missing, ...noCode } = sdkRefused('01055550000', messageId('A'))
    const body = { groupInfo: sdkGroupInfo, messageList: [], failedMessageList: [noCode, sdkRefused('01055550000', messageId('B'))] }

    expect(classifyResponse(200, JSON.stringify(body), call)).toMatchObject({
      refused: [{ recipientIndex: 0, statusCode: '1062' }],
    })
  })
})

describe('describeHttpError', () => {
  it('quotes the provider error code and message', () => {
    expect(describeHttpError(402, '{"errorCode":"NotEnoughBalance","errorMessage":"balance too low"}')).toBe(
      'NotEnoughBalance: balance too low (HTTP 402)',
    )
  })

  it('falls back to the status for any other body', () => {
    expect(describeHttpError(502, '<html>Bad gateway</html>')).toBe('HTTP 502')
  })

  it('bounds the length of a long provider message', () => {
    const text = JSON.stringify({ errorCode: 'ValidationError', errorMessage: 'x'.repeat(5_000) })
    expect(describeHttpError(400, text).length).toBeLessThanOrEqual(500)
  })
})
