import { describe, expect, it } from 'vitest'
import { MOCK_KAKAO_CHANNEL } from '../../lib/dispatch/providers/mock-kakao.js'
import { theAuditEvent } from '../audit/audit-fixtures.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { createClass, enrol, messageRows, post, recipientRows, send } from '../support/sms-send-fixtures.js'
import { academy, type Actor } from '../support/staff-fixtures.js'
import { kakaoClient } from './kakao-fixtures.js'

const ATTENDANCE = '[출결 알림] #{name} 학생이 #{time}에 #{className} 수업에 출석했습니다.'

// AlimTalk sends on the mock provider, whose catalog belongs to mock-channel (docs/api.md#sending-alimtalk).
describe('POST /v1/sms/send with channel ALIMTALK', () => {
  const app = useTestApp()
  const kakao = kakaoClient(() => app.current)

  /** An academy with the mock channel linked and `templates` imported; their ids by provider template id. */
  async function kakaoAcademy(templates: string[] = ['mock-attendance'], link = true) {
    const people = await academy(app.current)
    if (link) expect((await kakao.putChannel(people.owner, { pfId: MOCK_KAKAO_CHANNEL })).statusCode).toBe(200)
    const ids: Record<string, number> = {}
    for (const providerTemplateId of templates) {
      const imported = await kakao.importTemplate(people.owner, { providerTemplateId })
      expect(imported.statusCode).toBe(201)
      ids[providerTemplateId] = imported.json().id
    }
    return { ...people, ids }
  }

  const alimtalk = (kakaoTemplateId: number, extra: Record<string, unknown> = {}) => ({
    title: 'Attendance',
    channel: 'ALIMTALK',
    kakaoTemplateId,
    variables: { time: '16:00', className: 'Math A' },
    recipients: [
      { phone: '010-1234-5678', name: 'Kim Minji' },
      { phone: '010-8765-4321', name: 'Lee Junho', variables: { time: '16:05' } },
    ],
    ...extra,
  })

  it('accepts it (201) at 13 per recipient, keeps the template unrendered and stores each recipient values with the name default', async () => {
    const { tenant, manager, ids } = await kakaoAcademy()
    const response = await send(app.current, manager, alimtalk(ids['mock-attendance']!))
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body).toMatchObject({
      channel: 'ALIMTALK',
      fallback: 'SMS',
      kakaoTemplateId: ids['mock-attendance'],
      content: ATTENDANCE,
      templateId: null,
      title: 'Attendance',
      recipientCount: 2,
      estimatedSegments: 2,
      unitPrice: 13,
      totalPrice: 26,
      // The fallback's type: the longest rendered text is within 90 bytes of EUC-KR.
      messageType: 'SMS',
      status: 'PENDING',
      recipients: [
        { phone: '010-****-5678', name: 'Kim Minji', deliveryStatus: 'PENDING', deliveredVia: null },
        { phone: '010-****-4321', name: 'Lee Junho', deliveryStatus: 'PENDING', deliveredVia: null },
      ],
    })
    const [message] = await messageRows(tenant)
    expect(message).toMatchObject({
      channel: 'ALIMTALK',
      fallback: 'SMS',
      kakaoTemplateId: ids['mock-attendance'],
      kakaoPfId: MOCK_KAKAO_CHANNEL,
      kakaoProviderTemplateId: 'mock-attendance',
      kakaoVariables: { time: '16:00', className: 'Math A' },
      content: ATTENDANCE,
    })
    const stored = await recipientRows(tenant, body.id)
    expect(stored.map((row) => row.variables)).toEqual([{ name: 'Kim Minji' }, { name: 'Lee Junho', time: '16:05' }])
    expect(stored.map((row) => row.deliveredVia)).toEqual([null, null])
    const accepted = await theAuditEvent(tenant, 'SMS_ACCEPTED')
    expect(accepted.details).toMatchObject({ channel: 'ALIMTALK', kakaoTemplateId: ids['mock-attendance'], recipientCount: 2 })
  })

  it('takes fallback NONE, and sizes by the longest text as the LMS its fallback would be, at the same price', async () => {
    const { manager, ids } = await kakaoAcademy()
    const response = await send(app.current, manager, {
      ...alimtalk(ids['mock-attendance']!, { fallback: 'NONE' }),
      recipients: [{ phone: '010-1234-5678', name: 'K' }, { phone: '010-8765-4321', name: 'L', variables: { time: '오후 네 시 삼십 분부터 여섯 시 정각까지의 보충 수업 시간' } }],
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ fallback: 'NONE', messageType: 'LMS', unitPrice: 13, totalPrice: 26 })
  })

  it('lets a request-wide name win over the recipient field, and the recipient own name over both', async () => {
    const { tenant, manager, ids } = await kakaoAcademy()
    const response = await send(app.current, manager, {
      ...alimtalk(ids['mock-attendance']!),
      variables: { time: '16:00', className: 'Math A', name: 'Student' },
      recipients: [{ phone: '010-1234-5678', name: 'Kim' }, { phone: '010-8765-4321', name: 'Lee', variables: { name: 'Junho' } }],
    })
    expect(response.statusCode).toBe(201)
    expect((await recipientRows(tenant, response.json().id)).map((row) => row.variables)).toEqual([{}, { name: 'Junho' }])
  })

  it('sends to a class with className and name defaulting to the enrolment', async () => {
    const { tenant, manager, ids } = await kakaoAcademy()
    const math = await createClass(tenant, 'Math A')
    await enrol(tenant, math.id, { name: 'Kim Minji', guardianPhone: '010-1234-5678' })
    const response = await post(app.current, `/v1/sms/send/class/${math.id}`, manager, {
      title: 'Attendance',
      channel: 'ALIMTALK',
      kakaoTemplateId: ids['mock-attendance'],
      variables: { time: '16:00' },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ channel: 'ALIMTALK', recipientType: 'GUARDIAN', totalPrice: 13, content: ATTENDANCE })
    expect((await recipientRows(tenant, response.json().id)).map((row) => row.variables)).toEqual([{ name: 'Kim Minji', className: 'Math A' }])
  })

  it('sends to a recipient group of the sender', async () => {
    const { tenant, manager, ids } = await kakaoAcademy()
    const group = await post(app.current, '/v1/sms/recipient-groups', manager, {
      name: 'Guardians',
      recipients: [{ phone: '010-3000-0001', name: 'Choi Minji' }, { phone: '010-3000-0002', name: 'Park Jisu' }],
    })
    expect(group.statusCode).toBe(201)
    const response = await send(app.current, manager, {
      ...alimtalk(ids['mock-attendance']!),
      recipients: undefined,
      recipientGroupId: group.json().id,
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ channel: 'ALIMTALK', recipientGroupId: group.json().id, recipientCount: 2, totalPrice: 26 })
    expect((await recipientRows(tenant, response.json().id)).map((row) => row.variables)).toEqual([{ name: 'Choi Minji' }, { name: 'Park Jisu' }])
  })

  describe('refusals, with nothing stored', () => {
    async function refused(who: Actor, tenant: { id: number }, payload: unknown, status: number, code: Parameters<typeof expectProblem>[2]) {
      const body = expectProblem(await send(app.current, who, payload), status, code)
      expect(await messageRows(tenant as never)).toEqual([])
      return body
    }

    it('answers KAKAO_TEMPLATE_NOT_FOUND (404) for an unknown id and for a template of another academy', async () => {
      const { tenant, manager } = await kakaoAcademy()
      const other = await kakaoAcademy()
      await refused(manager, tenant, alimtalk(other.ids['mock-attendance']!), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
      await refused(manager, tenant, alimtalk(987654321), 404, 'KAKAO_TEMPLATE_NOT_FOUND')
    })

    it('answers KAKAO_TEMPLATE_NOT_APPROVED (409) for a template under inspection', async () => {
      const { tenant, manager, ids } = await kakaoAcademy(['mock-exam'])
      await refused(manager, tenant, alimtalk(ids['mock-exam']!), 409, 'KAKAO_TEMPLATE_NOT_APPROVED')
    })

    it('answers KAKAO_CHANNEL_NOT_FOUND with 409 once the channel is unlinked, where reading the channel answers 404', async () => {
      const { tenant, owner, manager, ids } = await kakaoAcademy()
      expect((await kakao.deleteChannel(owner)).statusCode).toBe(204)
      await refused(manager, tenant, alimtalk(ids['mock-attendance']!), 409, 'KAKAO_CHANNEL_NOT_FOUND')
      expectProblem(await kakao.getChannel(owner), 404, 'KAKAO_CHANNEL_NOT_FOUND')
    })

    it('answers KAKAO_TEMPLATE_UNKNOWN (409) for a template imported under a channel since replaced, and sends it again under that channel', async () => {
      const { tenant, owner, manager, ids } = await kakaoAcademy()
      expect((await kakao.putChannel(owner, { pfId: 'another-channel' })).statusCode).toBe(200)
      await refused(manager, tenant, alimtalk(ids['mock-attendance']!), 409, 'KAKAO_TEMPLATE_UNKNOWN')
      expect((await kakao.putChannel(owner, { pfId: MOCK_KAKAO_CHANNEL })).statusCode).toBe(200)
      expect((await send(app.current, manager, alimtalk(ids['mock-attendance']!))).statusCode).toBe(201)
    })

    it('answers ALIMTALK_NOT_FOR_ADVERTISING (400) for an advertisement', async () => {
      const { tenant, manager, ids } = await kakaoAcademy()
      await refused(manager, tenant, alimtalk(ids['mock-attendance']!, { purpose: 'ADVERTISEMENT' }), 400, 'ALIMTALK_NOT_FOR_ADVERTISING')
    })

    it('answers KAKAO_VARIABLES_MISSING (400) naming the variable without a value for some recipient', async () => {
      const { tenant, manager, ids } = await kakaoAcademy()
      const payload = alimtalk(ids['mock-attendance']!, {
        variables: { className: 'Math A' },
        recipients: [{ phone: '010-1234-5678', name: 'Kim', variables: { time: '16:00' } }, { phone: '010-8765-4321', name: 'Lee' }],
      })
      const body = await refused(manager, tenant, payload, 400, 'KAKAO_VARIABLES_MISSING')
      expect(body.detail).toBe('The template variable #{time} has no value for recipient 1.')
      // A recipient without a name has no default for #{name}.
      const nameless = alimtalk(ids['mock-attendance']!, { recipients: [{ phone: '010-1234-5678' }] })
      expect((await refused(manager, tenant, nameless, 400, 'KAKAO_VARIABLES_MISSING')).detail).toContain('#{name}')
    })

    it('answers CONTENT_TOO_LONG (400) when the text for some recipient is over 1,000 characters after rendering', async () => {
      const { tenant, manager, ids } = await kakaoAcademy()
      const fits = 'x'.repeat(1000 - [...ATTENDANCE.replace(/#\{[^}]+\}/g, '')].length - 'Kim'.length - 'A'.length)
      const payload = alimtalk(ids['mock-attendance']!, {
        variables: { time: fits, className: 'A' },
        recipients: [{ phone: '010-1234-5678', name: 'Kim' }, { phone: '010-8765-4321', name: 'Leee' }],
      })
      const body = await refused(manager, tenant, payload, 400, 'CONTENT_TOO_LONG')
      expect(body.detail).toBe('The rendered AlimTalk is 1001 characters for recipient 1; the limit is 1000 characters.')
      const exactly = { ...payload, recipients: [{ phone: '010-1234-5678', name: 'Kim' }] }
      expect((await send(app.current, manager, exactly)).statusCode).toBe(201)
    })

    it('answers VALIDATION_FAILED (400) for content or templateId beside ALIMTALK, and without kakaoTemplateId', async () => {
      const { tenant, manager, ids } = await kakaoAcademy()
      const withContent = await refused(manager, tenant, alimtalk(ids['mock-attendance']!, { content: 'Hello' }), 400, 'VALIDATION_FAILED')
      expect(withContent.errors).toEqual([{ field: 'body.content', message: 'must be absent with channel ALIMTALK (the Kakao template is the text)' }])
      const withTemplate = await refused(manager, tenant, alimtalk(ids['mock-attendance']!, { templateId: 1 }), 400, 'VALIDATION_FAILED')
      expect(withTemplate.errors).toEqual([{ field: 'body.templateId', message: expect.stringContaining('must be absent') }])
      const without = await refused(manager, tenant, alimtalk(ids['mock-attendance']!, { kakaoTemplateId: undefined }), 400, 'VALIDATION_FAILED')
      expect(without.errors).toEqual([{ field: 'body.kakaoTemplateId', message: "must have required property 'kakaoTemplateId'" }])
    })

    it('answers VALIDATION_FAILED (400) for the AlimTalk fields on an SMS send, and for an SMS without content', async () => {
      const { tenant, manager, ids } = await kakaoAcademy()
      const sms = { title: 'Hello', content: 'Hello', recipients: [{ phone: '010-1234-5678', variables: { a: 'b' } }] }
      const body = await refused(manager, tenant, { ...sms, kakaoTemplateId: ids['mock-attendance'] }, 400, 'VALIDATION_FAILED')
      expect((body.errors as { field: string }[]).map((error) => error.field)).toEqual(['body.kakaoTemplateId', 'body.recipients.0.variables'])
      const noContent = await refused(manager, tenant, { title: 'Hello', recipients: [{ phone: '010-1234-5678' }] }, 400, 'VALIDATION_FAILED')
      expect(noContent.errors).toEqual([{ field: 'body.content', message: "must have required property 'content'" }])
    })
  })

  it('lists AlimTalk and SMS messages apart with ?channel=', async () => {
    const { manager, ids } = await kakaoAcademy()
    const sms = await send(app.current, manager, { title: 'Hello', content: 'Hello', recipients: [{ phone: '010-1234-5678' }] })
    expect(sms.statusCode).toBe(201)
    const kakaoSend = await send(app.current, manager, alimtalk(ids['mock-attendance']!))
    expect(kakaoSend.statusCode).toBe(201)
    const page = async (query: string) =>
      (await app.current.inject({ method: 'GET', url: `/v1/sms/history${query}`, headers: manager.headers })).json()
    const alimtalkPage = await page('?channel=ALIMTALK')
    expect(alimtalkPage.items.map((item: { id: number }) => item.id)).toEqual([kakaoSend.json().id])
    expect(alimtalkPage.items[0]).toMatchObject({ channel: 'ALIMTALK', fallback: 'SMS', kakaoTemplateId: ids['mock-attendance'] })
    expect(alimtalkPage.total).toBe(1)
    const smsPage = await page('?channel=SMS')
    expect(smsPage.items).toEqual([expect.objectContaining({ id: sms.json().id, channel: 'SMS', fallback: null, kakaoTemplateId: null })])
    expect((await page('')).total).toBe(2)
    expect((await app.current.inject({ method: 'GET', url: '/v1/sms/history?channel=FAX', headers: manager.headers })).statusCode).toBe(400)
  })
})
