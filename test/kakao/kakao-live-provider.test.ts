import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fakeExtSmsCredentials } from '../dispatch/dispatch-test-bed.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { startFakeExtSms, type FakeExtSms } from '../support/fakes/extsms-server.js'
import { useTestApp } from '../support/helper.js'
import { academy } from '../support/staff-fixtures.js'
import { kakaoClient } from './kakao-fixtures.js'

const PF_ID = 'KA01PF2611290600000000000000ACAD'
const NOTICE = {
  templateId: 'KA01TP2611290600000000000NOTICE',
  channelId: PF_ID,
  name: '보강 안내',
  content: '#{name} 학생의 #{className} 보강이 #{date}에 있습니다. #{name} 학생 보호자님께 알려 드립니다.',
  status: 'INSPECTING' as const,
  buttons: [{ buttonType: 'WL', buttonName: '보강 일정', linkMo: 'https://academy.example/makeup' }],
}

/** The live provider's adapter, reading from the loopback fake of the provider over HTTP, signed. */
describe('Kakao channel and templates, on the live provider', () => {
  let fake: FakeExtSms
  beforeAll(async () => {
    fake = await startFakeExtSms(fakeExtSmsCredentials)
  })
  afterEach(() => fake.reset())
  afterAll(async () => {
    await fake?.close()
  })
  const app = useTestApp(() => ({
    env: {
      SVC_SMS_PROVIDER: 'extsms',
      SVC_SMS_EXTSMS_API_KEY: fakeExtSmsCredentials.apiKey,
      SVC_SMS_EXTSMS_API_SECRET: fakeExtSmsCredentials.apiSecret,
      SVC_SMS_EXTSMS_BASE_URL: fake.url,
      SVC_SMS_EXTSMS_WEBHOOK_TOKEN: 'kakao-webhook',
      SVC_SMS_PROVIDER_TIMEOUT_MS: '1000',
    },
  }))
  const kakao = kakaoClient(() => app.current)
  const kakaoCalls = () => fake.calls.filter((call) => call.phase === 'kakao')

  it('links a channel the provider knows, with its searchId, over a signed GET /kakao/v2/channels/{pfId}', async () => {
    fake.kakao.addChannel(PF_ID, '@sunshine-academy')
    const { owner, instructor } = await academy(app.current)
    const before = kakaoCalls().length
    const response = await kakao.putChannel(owner, { pfId: PF_ID })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ pfId: PF_ID, searchId: '@sunshine-academy' })
    expect((await kakao.getChannel(instructor)).json()).toEqual({ pfId: PF_ID, searchId: '@sunshine-academy' })
    const calls = kakaoCalls().slice(before)
    expect(calls.map((call) => [call.method, call.path, call.status])).toEqual([['GET', `/kakao/v2/channels/${PF_ID}`, 200]])
    expect(calls[0]!.headers.authorization).toMatch(/^HMAC-SHA256 apiKey=test-key, date=\S+, salt=\w+, signature=[0-9a-f]{64}$/)
  })

  it('answers KAKAO_CHANNEL_UNKNOWN for a pfId the provider does not have, keeping the linked channel', async () => {
    fake.kakao.addChannel(PF_ID)
    const { owner } = await academy(app.current)
    await kakao.putChannel(owner, { pfId: PF_ID })
    expectProblem(await kakao.putChannel(owner, { pfId: 'KA01PF-NOT-AT-THE-PROVIDER' }), 409, 'KAKAO_CHANNEL_UNKNOWN')
    expect((await kakao.getChannel(owner)).json()).toMatchObject({ pfId: PF_ID })
  })

  it('never asks the provider for a caller whose role may not link (an instructor gets AUTH_008)', async () => {
    const { instructor } = await academy(app.current)
    const before = kakaoCalls().length
    expectProblem(await kakao.putChannel(instructor, { pfId: PF_ID }), 403, 'AUTH_008')
    expect(kakaoCalls().length).toBe(before)
  })

  it('imports a template (201), its variables read from the content, and a refresh shows INSPECTING become APPROVED', async () => {
    fake.kakao.addChannel(PF_ID)
    fake.kakao.putTemplate(NOTICE)
    const { owner, manager } = await academy(app.current)
    await kakao.putChannel(owner, { pfId: PF_ID })
    const imported = await kakao.importTemplate(manager, { providerTemplateId: NOTICE.templateId })
    expect(imported.statusCode).toBe(201)
    const template = imported.json()
    expect(template).toEqual({
      id: expect.any(Number),
      providerTemplateId: NOTICE.templateId,
      name: NOTICE.name,
      content: NOTICE.content,
      variables: ['name', 'className', 'date'],
      buttons: NOTICE.buttons,
      status: 'INSPECTING',
      refreshedAt: expect.any(String),
    })

    fake.kakao.putTemplate({ ...NOTICE, status: 'APPROVED' })
    const refreshed = await kakao.refreshTemplate(owner, template.id)
    expect(refreshed.statusCode).toBe(200)
    expect(refreshed.json()).toMatchObject({ id: template.id, status: 'APPROVED', variables: ['name', 'className', 'date'] })
    expect((await kakao.getTemplate(owner, template.id)).json()).toMatchObject({ status: 'APPROVED' })

    // Importing it again refreshes the same copy.
    fake.kakao.putTemplate({ ...NOTICE, status: 'REJECTED', buttons: undefined })
    const again = await kakao.importTemplate(owner, { providerTemplateId: NOTICE.templateId })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toMatchObject({ id: template.id, status: 'REJECTED', buttons: [] })
    expect(kakaoCalls().at(-1)).toMatchObject({ method: 'GET', path: `/kakao/v2/templates/${NOTICE.templateId}`, status: 200 })
  })

  it('answers KAKAO_TEMPLATE_UNKNOWN for a template of another channel and for one the provider does not have', async () => {
    fake.kakao.addChannel(PF_ID)
    fake.kakao.putTemplate({ ...NOTICE, templateId: 'KA01TP-OTHER-CHANNEL', channelId: 'KA01PF-SOMEONE-ELSE' })
    const { owner } = await academy(app.current)
    await kakao.putChannel(owner, { pfId: PF_ID })
    expectProblem(await kakao.importTemplate(owner, { providerTemplateId: 'KA01TP-OTHER-CHANNEL' }), 409, 'KAKAO_TEMPLATE_UNKNOWN')
    expectProblem(await kakao.importTemplate(owner, { providerTemplateId: 'KA01TP-NOWHERE' }), 409, 'KAKAO_TEMPLATE_UNKNOWN')
    expect((await kakao.listTemplates(owner)).json()).toEqual([])
  })

  it('answers KAKAO_CHANNEL_NOT_FOUND without asking the provider while no channel is linked', async () => {
    fake.kakao.putTemplate(NOTICE)
    const { owner } = await academy(app.current)
    const before = kakaoCalls().length
    expectProblem(await kakao.importTemplate(owner, { providerTemplateId: NOTICE.templateId }), 404, 'KAKAO_CHANNEL_NOT_FOUND')
    expect(kakaoCalls().length).toBe(before)
  })

  it('answers SERVICE_UNAVAILABLE with Retry-After, changing nothing, when the provider fails, refuses the key or stalls', async () => {
    fake.kakao.addChannel(PF_ID)
    fake.kakao.putTemplate(NOTICE)
    const { owner } = await academy(app.current)
    await kakao.putChannel(owner, { pfId: PF_ID })
    const template = (await kakao.importTemplate(owner, { providerTemplateId: NOTICE.templateId })).json()
    fake.kakao.putTemplate({ ...NOTICE, status: 'APPROVED' })

    for (const fault of [{ status: 500 }, { status: 429 }, { status: 403, errorCode: 'InvalidAPIKey' }, { timeoutMs: 3_000 }] as const) {
      fake.fail({ ...fault, phase: 'kakao' })
      const response = await kakao.refreshTemplate(owner, template.id)
      const refused = expectProblem(response, 503, 'SERVICE_UNAVAILABLE')
      expect(response.headers['retry-after']).toBe('1')
      expect(String(refused.detail)).toMatch(/provider/)
      expect(refused).not.toHaveProperty('errors')
      expectProblem(await kakao.putChannel(owner, { pfId: 'KA01PF-ANOTHER' }), 503, 'SERVICE_UNAVAILABLE')
      fake.reset()
    }
    expect((await kakao.getTemplate(owner, template.id)).json()).toMatchObject({ status: 'INSPECTING' })
    expect((await kakao.getChannel(owner)).json()).toMatchObject({ pfId: PF_ID })
  })
})
