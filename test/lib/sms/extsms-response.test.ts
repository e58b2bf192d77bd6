import { describe, expect, it } from 'vitest'
import { classifyResponse, describeHttpError } from '../../../lib/sms/providers/extsms-response.js'

const sent = new Set([0, 1, 2])
const groupInfo = { groupId: 'G4V20260813185432L0UOCCFAV9BAHIX', status: 'SENDING' }

function ok(body: unknown) {
  return classifyResponse(200, JSON.stringify(body), sent)
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
    expect(classifyResponse(200, text, sent)).toMatchObject({ kind: 'retryable' })
  })

  it.each([429, 500, 502, 503, 504])('treats HTTP %i as retryable', (status) => {
    expect(classifyResponse(status, '', sent).kind).toBe('retryable')
  })

  it.each([301, 400, 401, 402, 403, 404, 409, 413])('treats HTTP %i as rejected', (status) => {
    expect(classifyResponse(status, '', sent).kind).toBe('rejected')
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
