import { describe, expect, it } from 'vitest'
import { owner } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'
import { messageRows, post, recipientRows, send } from '../support/sms-send-fixtures.js'
import { academy } from '../support/staff-fixtures.js'

const LONE_SURROGATE = '\uD83D'
const REPLACEMENT = '\uFFFD'

describe('POST /v1/sms/send: characters outside EUC-KR', () => {
  const app = useTestApp()

  it('answers, prices and stores a short content with an emoji as LMS', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const response = await send(app.current, sender, {
      recipients: [{ phone: '010-1234-5678', name: 'Kim' }],
      title: 'Notice',
      content: 'See you tomorrow \u{1F600}',
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ messageType: 'LMS', unitPrice: 50, totalPrice: 50 })
    const [row] = await messageRows(tenant)
    expect(row).toMatchObject({ messageType: 'LMS', unitPrice: 50 })
  })

  it('makes LMS of a name that renders an emoji, but keeps plain Hangul content SMS', async () => {
    const { owner: sender } = await academy(app.current)
    const emojiName = await send(app.current, sender, {
      recipients: [{ phone: '010-1234-5678', name: 'Kim \u2764\uFE0F' }],
      title: 'Notice',
      content: 'Hello {name}',
    })
    expect(emojiName.json()).toMatchObject({ messageType: 'LMS', unitPrice: 50 })
    const hangul = await send(app.current, sender, {
      recipients: [{ phone: '010-1234-5678', name: '김민수' }],
      title: 'Notice',
      content: '{name} 학부모님, 내일 수업이 있습니다.',
    })
    expect(hangul.json()).toMatchObject({ messageType: 'SMS', unitPrice: 20 })
  })
})

describe('text fields are normalised the same way wherever stored or echoed', () => {
  const app = useTestApp()

  it('answers and stores a lone surrogate as U+FFFD in title, content, names and class names of a send', async () => {
    const { tenant, owner: sender } = await academy(app.current)
    const response = await send(app.current, sender, {
      recipients: [{ phone: '010-1234-5678', name: `Kim${LONE_SURROGATE}`, className: `Math${LONE_SURROGATE}`, recipientRole: `G${LONE_SURROGATE}` }],
      title: `Notice${LONE_SURROGATE}`,
      content: `Hello${LONE_SURROGATE} {name}`,
    })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body.title).toBe(`Notice${REPLACEMENT}`)
    expect(body.content).toBe(`Hello${REPLACEMENT} {name}`)
    expect(body.recipients[0]).toMatchObject({ name: `Kim${REPLACEMENT}`, className: `Math${REPLACEMENT}`, recipientRole: `G${REPLACEMENT}` })
    expect(response.body).not.toMatch(/\\ud83d/i)
    const [row] = await recipientRows(tenant, body.id)
    expect(row).toMatchObject({ name: `Kim${REPLACEMENT}`, className: `Math${REPLACEMENT}` })
  })

  it('answers a recipient group with the same normalised names it stores', async () => {
    const { tenant, owner: staff } = await academy(app.current)
    const response = await post(app.current, '/v1/sms/recipient-groups', staff, {
      name: `Group${LONE_SURROGATE}`,
      icon: `i${LONE_SURROGATE}`,
      recipients: [{ phone: '010-1234-5678', name: `Lee${LONE_SURROGATE}` }],
    })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body.name).toBe(`Group${REPLACEMENT}`)
    expect(body.icon).toBe(`i${REPLACEMENT}`)
    expect(body.recipients[0].name).toBe(`Lee${REPLACEMENT}`)
    const member = await owner().selectFrom('recipientGroupMembers').select('name').where('tenantId', '=', tenant.id).executeTakeFirstOrThrow()
    expect(member.name).toBe(`Lee${REPLACEMENT}`)
  })

  it('answers a template with the same normalised name and content it stores', async () => {
    const { owner: staff } = await academy(app.current)
    const response = await app.current.inject({
      method: 'POST',
      url: '/v1/sms-templates',
      headers: staff.headers,
      payload: { name: `T${LONE_SURROGATE}`, content: `Body${LONE_SURROGATE}`, category: 'GENERAL' },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toMatchObject({ name: `T${REPLACEMENT}`, content: `Body${REPLACEMENT}` })
  })
})
