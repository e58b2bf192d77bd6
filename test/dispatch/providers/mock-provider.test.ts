import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../../lib/dispatch/delivery/delivery-report.js'
import { createMockProvider } from '../../../lib/dispatch/providers/mock.js'
import type { OutgoingSms, SendRequest, SmsProvider } from '../../../lib/dispatch/providers/provider.js'

function message(recipientIndex: number): OutgoingSms {
  return { recipientIndex, to: `0101234${String(5000 + recipientIndex)}`, from: '0212345678', text: `code ${recipientIndex}`, type: 'SMS' }
}

function request(messages: OutgoingSms[], kind: SendRequest['kind'] = 'STAFF'): SendRequest {
  return { tenantSlug: 'acme', smsId: 7, kind, messages }
}

async function newGroup(provider: SmsProvider): Promise<string> {
  const created = await provider.createGroup(request([]))
  if (created.kind !== 'ok') throw new Error('the mock refused to create a group')
  return created.groupId
}

describe('the mock provider', () => {
  it('makes no network call, so a dispatcher lease needs no room for its time limit', () => {
    expect(createMockProvider()).toMatchObject({ name: 'mock', callTimeoutMs: 0 })
  })

  it('creates an empty group, takes every message added to it, and holds them until the group is sent', async () => {
    const provider = createMockProvider()
    const groupId = await newGroup(provider)
    expect(groupId).toMatch(/^G4V\d{14}[0-9A-Z]{15}$/)
    expect(await provider.readGroup(groupId, [message(0)])).toEqual({ kind: 'ok', sent: false, entries: [] })

    const added = await provider.addMessages(groupId, request([message(0), message(3)]))

    expect(added).toEqual({
      kind: 'ok',
      entries: [
        { recipientIndex: 0, messageId: expect.stringMatching(/^M4V\d{14}[0-9A-Z]{15}$/), statusCode: '2000', statusMessage: 'accepted' },
        { recipientIndex: 3, messageId: expect.stringMatching(/^M4V/), statusCode: '2000', statusMessage: 'accepted' },
      ],
    })
    if (added.kind !== 'ok') return
    expect(await provider.readGroup(groupId, [message(0), message(3)])).toEqual({ kind: 'ok', sent: false, entries: added.entries })
  })

  it('sends a group once: a second send and a later add are refused', async () => {
    const provider = createMockProvider()
    const groupId = await newGroup(provider)
    await provider.addMessages(groupId, request([message(0)]))

    expect(await provider.sendGroup(groupId)).toEqual({ kind: 'ok' })
    expect(await provider.readGroup(groupId, [message(0)])).toMatchObject({ kind: 'ok', sent: true, entries: [{ recipientIndex: 0 }] })
    expect(await provider.sendGroup(groupId)).toMatchObject({ kind: 'rejected' })
    expect(await provider.addMessages(groupId, request([message(1)]))).toMatchObject({ kind: 'rejected' })
    expect(await provider.readGroup(groupId, [message(0), message(1)])).toMatchObject({ entries: [{ recipientIndex: 0 }] })
  })

  it('reads back only the recipients asked about', async () => {
    const provider = createMockProvider()
    const groupId = await newGroup(provider)
    await provider.addMessages(groupId, request([message(0), message(1), message(2)]))

    const read = await provider.readGroup(groupId, [message(2), message(9)])

    expect(read).toMatchObject({ kind: 'ok', entries: [{ recipientIndex: 2 }] })
    if (read.kind === 'ok') expect(read.entries).toHaveLength(1)
  })

  it('reads a group it never created as missing, and refuses to fill or send it', async () => {
    const provider = createMockProvider()
    // A group of another mock: another process's groups are unknown here.
    const elsewhere = await newGroup(createMockProvider())

    expect(await provider.readGroup(elsewhere, [message(0)])).toEqual({ kind: 'missing' })
    expect(await provider.addMessages(elsewhere, request([message(0)]))).toMatchObject({ kind: 'rejected' })
    expect(await provider.sendGroup(elsewhere)).toMatchObject({ kind: 'rejected' })
  })

  it('reports an AlimTalk notice delivered with type ATA, an SMS or LMS with its own type', async () => {
    const provider = createMockProvider()
    const groupId = await newGroup(provider)
    const notice: OutgoingSms = {
      recipientIndex: 1,
      to: '01012345001',
      from: '0212345678',
      text: '김민준 학생 출석 확인',
      type: 'ATA',
      kakao: { pfId: 'PF', templateId: 'TP', variables: { '#{name}': '김민준' }, disableSms: false },
    }
    const added = await provider.addMessages(groupId, request([message(0), notice, { ...message(2), type: 'LMS' }]))
    if (added.kind !== 'ok') throw new Error('not added')
    await provider.sendGroup(groupId)
    const reports: DeliveryReport[] = []
    const owner = { tenantSlug: 'acme', smsId: 7, kind: 'STAFF' as const }
    await provider.afterRecorded!({ owner, groupId, taken: added.entries }, async (made) => void reports.push(...made))
    expect(reports.map((report) => [report.recipientIndex, report.statusCode, report.type])).toEqual([
      [0, '4000', 'SMS'],
      [1, '4000', 'ATA'],
      [2, '4000', 'LMS'],
    ])
  })

  it('reports every taken recipient of a sent group DELIVERED, under the owner and the group', async () => {
    const provider = createMockProvider()
    const groupId = await newGroup(provider)
    const added = await provider.addMessages(groupId, request([message(0), message(4)]))
    if (added.kind !== 'ok') throw new Error('not added')
    await provider.sendGroup(groupId)

    const reports: DeliveryReport[] = []
    const owner = { tenantSlug: 'acme', smsId: 7, kind: 'STAFF' as const }
    await provider.afterRecorded!({ owner, groupId, taken: added.entries }, async (made) => void reports.push(...made))

    expect(reports).toEqual(
      added.entries.map((entry) => ({
        tenantSlug: 'acme',
        smsId: 7,
        recipientIndex: entry.recipientIndex,
        messageId: entry.messageId,
        groupId,
        statusCode: '4000',
        statusMessage: 'delivered',
        dateProcessed: expect.any(Date),
        type: 'SMS',
      })),
    )
    // Reported, the group is forgotten: the mock's memory does not grow with every message sent.
    expect(await provider.readGroup(groupId, [message(0)])).toEqual({ kind: 'missing' })
  })

  it("writes a system message's text to the log it was given, and never a staff message's", async () => {
    const lines: string[] = []
    const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) })
    const provider = createMockProvider({ revealSystemTextTo: log })

    await provider.addMessages(await newGroup(provider), request([message(0)], 'STAFF'))
    expect(lines).toEqual([])
    await provider.addMessages(await newGroup(provider), request([message(1)], 'VERIFICATION_CODE'))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({ smsId: 7, kind: 'VERIFICATION_CODE', text: 'code 1' })
    expect(lines[0]).not.toContain(message(1).to)

    const silent = createMockProvider()
    await expect(silent.addMessages(await newGroup(silent), request([message(2)], 'VERIFICATION_CODE'))).resolves.toMatchObject({ kind: 'ok' })
  })
})
