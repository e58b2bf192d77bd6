import { Either, ParseResult, Schema } from 'effect'
import { createGroupRequestSchema, groupMessageAddRequestSchema } from 'solapi'
import { describe, expect, it } from 'vitest'
import { addBody, CREATE_GROUP_BODY } from '../../../lib/dispatch/providers/extsms-request.js'
import type { SendRequest } from '../../../lib/dispatch/providers/provider.js'

/**
 * The bodies the adapter sends, checked against the official SDK's (solapi 6.x) own schemas of the same calls: the
 * group's creation and its add call, whose messages are send-many's. Excess properties are errors, so a field the
 * provider does not know fails here too.
 */
function problemsOf(schema: Schema.Schema<any, any, never>, body: unknown): string | null {
  const decoded = Schema.decodeUnknownEither(schema, { onExcessProperty: 'error', errors: 'all' })(body)
  return Either.isLeft(decoded) ? ParseResult.TreeFormatter.formatErrorSync(decoded.left) : null
}

const request: SendRequest = {
  tenantSlug: 'acme',
  smsId: 42,
  kind: 'STAFF',
  messages: [
    { recipientIndex: 0, to: '01012345678', from: '0212345678', text: 'hello', type: 'SMS' },
    { recipientIndex: 1, to: '01012345679', from: '0212345678', text: '긴 안내문 '.repeat(20), type: 'LMS', subject: '공지' },
    {
      recipientIndex: 2,
      to: '01012345670',
      from: '0212345678',
      text: '김민준 학생 출석 확인: 15:00',
      type: 'ATA',
      kakao: { pfId: 'KA01PF', templateId: 'KA01TP', variables: { '#{name}': '김민준', '#{time}': '15:00' }, disableSms: false },
    },
    {
      recipientIndex: 3,
      to: '01012345671',
      from: '0212345678',
      text: '이서연 학생 출석 확인: 15:00',
      type: 'ATA',
      kakao: { pfId: 'KA01PF', templateId: 'KA01TP', variables: { '#{name}': '이서연', '#{time}': '15:00' }, disableSms: true },
    },
  ],
}

describe("the extsms adapter's bodies, against the official SDK's schemas", () => {
  it('a group is created with a body the SDK accepts', () => {
    expect(problemsOf(createGroupRequestSchema, CREATE_GROUP_BODY)).toBeNull()
  })

  it('an add call of SMS, LMS and ATA messages is a valid group message add request', () => {
    const body = addBody(request)
    expect(body.messages.map((message) => message.type)).toEqual(['SMS', 'LMS', 'ATA', 'ATA'])
    expect(problemsOf(groupMessageAddRequestSchema, body)).toBeNull()
    for (const message of body.messages) expect(problemsOf(groupMessageAddRequestSchema, { messages: [message] })).toBeNull()
  })

  it('the ATA message carries the kakaoOptions the SDK declares, disableSms only when the fallback is off', () => {
    const [, , withFallback, withoutFallback] = addBody(request).messages
    expect(withFallback).toEqual({
      to: '01012345670',
      from: '0212345678',
      text: '김민준 학생 출석 확인: 15:00',
      type: 'ATA',
      kakaoOptions: { pfId: 'KA01PF', templateId: 'KA01TP', variables: { '#{name}': '김민준', '#{time}': '15:00' } },
      customFields: { svcTenant: 'acme', svcSmsId: '42', svcRecipient: '2' },
    })
    expect(withoutFallback).toMatchObject({ kakaoOptions: { disableSms: true } })
  })

  it('the schema is strict enough to catch a malformed message', () => {
    const body = addBody(request)
    const bad = { messages: [{ ...body.messages[2], kakaoOptions: { templateId: 'KA01TP' } }] }
    expect(problemsOf(groupMessageAddRequestSchema, bad)).toMatch(/pfId/)
    expect(problemsOf(groupMessageAddRequestSchema, { messages: [{ ...body.messages[0], unknownField: 1 }] })).toMatch(/unknownField/)
  })
})
