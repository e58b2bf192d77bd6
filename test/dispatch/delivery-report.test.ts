import { describe, expect, it } from 'vitest'
import { AppError } from '../../lib/errors.js'
import { parseDeliveryReports } from '../../lib/dispatch/delivery/delivery-report.js'

const report = {
  messageId: 'M4V20260302143506CQKNPHTPCX4P5E',
  groupId: 'G4V20260302143025ABCDEFGHIJKLMNO',
  type: 'SMS',
  to: '01012345678',
  from: '0212345678',
  statusCode: '4000',
  statusMessage: 'delivered',
  dateProcessed: '2026-03-02T05:35:08.000Z',
  dateReported: '2026-03-02T05:35:09.000Z',
  customFields: { svcTenant: 'acme', svcSmsId: '42', svcRecipient: '0' },
}

const parsed = {
  tenantSlug: 'acme',
  smsId: 42,
  recipientIndex: 0,
  messageId: 'M4V20260302143506CQKNPHTPCX4P5E',
  groupId: 'G4V20260302143025ABCDEFGHIJKLMNO',
  statusCode: '4000',
  statusMessage: 'delivered',
  dateProcessed: new Date('2026-03-02T05:35:08.000Z'),
  type: 'SMS',
}

function withCustom(customFields: unknown) {
  return { ...report, customFields }
}

describe('parseDeliveryReports', () => {
  it('reads an envelope', () => {
    expect(parseDeliveryReports([{ eventDataId: 'EVT1', retryCount: 0, data: report }])).toEqual([
      { ok: true, report: parsed },
    ])
  })

  it('reads a flat report', () => {
    expect(parseDeliveryReports([report])).toEqual([{ ok: true, report: parsed }])
  })

  it('reads the delivered type: ATA, or the SMS or LMS of an AlimTalk fallback; anything too long as none', () => {
    const types = ['ATA', 'LMS', 'X'.repeat(21)].map((type) => parseDeliveryReports([{ ...report, type }])[0])
    expect(types.map((entry) => entry!.ok && entry!.report.type)).toEqual(['ATA', 'LMS', null])
  })

  it('reads a mix of envelopes and flat reports in order', () => {
    const second = withCustom({ svcTenant: 'acme', svcSmsId: '42', svcRecipient: '7' })
    const result = parseDeliveryReports([{ data: report }, second])
    expect(result.map((entry) => entry.ok && entry.report.recipientIndex)).toEqual([0, 7])
  })

  it('leaves optional fields null when absent or malformed', () => {
    const minimal = { statusCode: '3043', dateProcessed: 'not a date', customFields: report.customFields }
    expect(parseDeliveryReports([minimal])).toEqual([
      {
        ok: true,
        report: {
          ...parsed,
          messageId: null,
          groupId: null,
          statusCode: '3043',
          statusMessage: null,
          dateProcessed: null,
          type: null,
        },
      },
    ])
  })

  it.each([
    ['null', null],
    ['a string', 'report'],
    ['a number', 42],
    ['an array', [report]],
    ['data that is not an object', { data: 'x' }],
    ['no customFields', { ...report, customFields: undefined }],
    ['customFields not an object', withCustom('acme,42,0')],
    ['no svcTenant', withCustom({ svcSmsId: '42', svcRecipient: '0' })],
    ['empty svcTenant', withCustom({ svcTenant: '', svcSmsId: '42', svcRecipient: '0' })],
    ['no svcSmsId', withCustom({ svcTenant: 'acme', svcRecipient: '0' })],
    ['a non-integer svcSmsId', withCustom({ svcTenant: 'acme', svcSmsId: '4.2', svcRecipient: '0' })],
    ['a negative svcSmsId', withCustom({ svcTenant: 'acme', svcSmsId: '-1', svcRecipient: '0' })],
    ['a zero svcSmsId', withCustom({ svcTenant: 'acme', svcSmsId: '0', svcRecipient: '0' })],
    ['a huge svcSmsId', withCustom({ svcTenant: 'acme', svcSmsId: '99999999999999999999', svcRecipient: '0' })],
    ['a 16-digit svcSmsId past 2^53-1', withCustom({ svcTenant: 'acme', svcSmsId: '9007199254740993', svcRecipient: '0' })],
    ['no svcRecipient', withCustom({ svcTenant: 'acme', svcSmsId: '42' })],
    ['a text svcRecipient', withCustom({ svcTenant: 'acme', svcSmsId: '42', svcRecipient: 'first' })],
    ['no statusCode', { ...report, statusCode: undefined }],
    ['a blank statusCode', { ...report, statusCode: ' ' }],
  ])('marks an entry with %s as not ok without throwing', (_case, entry) => {
    const [result] = parseDeliveryReports([entry])
    expect(result).toMatchObject({ ok: false, reason: expect.any(String) })
  })

  it('keeps good entries next to bad ones', () => {
    const result = parseDeliveryReports([null, report, { data: {} }])
    expect(result.map((entry) => entry.ok)).toEqual([false, true, false])
  })

  it('accepts the 16-digit id of a message of a month range (yyyymm x 10^10 + n)', () => {
    const [result] = parseDeliveryReports([withCustom({ svcTenant: 'acme', svcSmsId: '2026120000000042', svcRecipient: '0' })])
    expect(result).toMatchObject({ ok: true, report: { smsId: 2026120000000042, recipientIndex: 0 } })
  })

  it('accepts integer custom fields sent as JSON numbers', () => {
    const [result] = parseDeliveryReports([withCustom({ svcTenant: 'acme', svcSmsId: 42, svcRecipient: 3 })])
    expect(result).toMatchObject({ ok: true, report: { smsId: 42, recipientIndex: 3 } })
  })

  it('accepts an empty array', () => {
    expect(parseDeliveryReports([])).toEqual([])
  })

  it.each([
    ['an object', { data: report }],
    ['null', null],
    ['a string', '[]'],
    ['undefined', undefined],
  ])('rejects a body that is %s with VALIDATION_FAILED', (_case, body) => {
    expect(() => parseDeliveryReports(body)).toThrow(AppError)
    try {
      parseDeliveryReports(body)
    } catch (error) {
      expect(error).toMatchObject({ code: 'VALIDATION_FAILED', detail: 'body must be a JSON array' })
    }
  })
})
