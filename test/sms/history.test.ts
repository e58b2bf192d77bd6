import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { owner as ownerDb } from '../support/fixtures.js'
import { databaseDriver, itPostgres, useTestApp } from '../support/helper.js'
import { recordQueries, type RecordedQuery } from '../support/statement-recorder.js'
import { insertMessageRow, minutesFromNow, problem, send } from '../support/sms-send-fixtures.js'
import { academy, actor, type Actor } from '../support/staff-fixtures.js'

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute))

describe('SMS history', () => {
  const app = useTestApp()
  const history = (who: Actor | undefined, query = '') =>
    app.current.inject({ method: 'GET', url: `/v1/sms/history${query}`, headers: who?.headers ?? {} })
  const detail = (who: Actor | undefined, id: number | string) =>
    app.current.inject({ method: 'GET', url: `/v1/sms/history/${id}`, headers: who?.headers ?? {} })
  const ids = (response: { json(): { items: { id: number }[] } }) => response.json().items.map((item) => item.id)

  describe('GET /v1/sms/history', () => {
    it('answers a page of the tenant’s messages, newest first, without recipients and with cut content', async () => {
      const { owner, instructor } = await academy(app.current)
      const longContent = `${'가'.repeat(70)}${'😀'.repeat(20)}{name}`
      const first = await insertMessageRow(owner, { createdAt: at(1), content: 'short {name}' })
      const second = await insertMessageRow(instructor, { createdAt: at(2), content: longContent, recipientPhones: ['01011112222', '01033334444'] })
      const response = await history(owner)
      expect(response.statusCode).toBe(200)
      const body = response.json()
      expect(body).toMatchObject({ page: 0, perPage: 20, total: 2, totalPages: 1, hasNext: false })
      expect(ids(response)).toEqual([second, first])
      expect(body.items[0]).toMatchObject({ recipients: [], recipientCount: 2, content: `${'가'.repeat(70)}${'😀'.repeat(10)}` })
      expect(body.items[1]).toMatchObject({ recipients: [], content: 'short {name}' })
      expect(Object.keys(body.items[0]).sort()).toEqual(
        [
          'id', 'senderId', 'senderNumber', 'recipientType', 'recipients', 'recipientCount', 'title', 'recipientGroupId',
          'content', 'templateId', 'scheduledAt', 'cancelledAt', 'sentAt', 'messageType', 'estimatedSegments',
          'unitPrice', 'totalPrice', 'status', 'successCount', 'failCount', 'purpose', 'optedOutCount', 'noConsentCount', 'channel',
          'fallback', 'kakaoTemplateId', 'createdAt', 'updatedAt',
        ].sort(),
      )
    })

    it('lets OWNER and MANAGER read tenant-wide and limits an INSTRUCTOR to own messages', async () => {
      const { tenant, owner, manager, instructor } = await academy(app.current)
      const byOwner = await insertMessageRow(owner, { createdAt: at(1) })
      const byInstructor = await insertMessageRow(instructor, { createdAt: at(2) })
      const colleague = await actor(app.current, tenant, 'INSTRUCTOR')
      const other = await insertMessageRow(colleague, { createdAt: at(3) })
      expect(ids(await history(owner))).toEqual([other, byInstructor, byOwner])
      expect(ids(await history(manager))).toEqual([other, byInstructor, byOwner])
      const own = await history(instructor)
      expect(ids(own)).toEqual([byInstructor])
      expect(own.json().total).toBe(1)
    })

    it('never shows another tenant’s messages', async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      await insertMessageRow(first.owner)
      expect((await history(second.owner)).json()).toMatchObject({ items: [], total: 0, totalPages: 0, hasNext: false })
    })

    it('pages with page and size, reporting total, totalPages and hasNext', async () => {
      const { owner } = await academy(app.current)
      const created: number[] = []
      for (let minute = 0; minute < 5; minute++) created.push(await insertMessageRow(owner, { createdAt: at(minute) }))
      const newestFirst = [...created].reverse()
      const page0 = await history(owner, '?size=2')
      expect(page0.json()).toMatchObject({ page: 0, perPage: 2, total: 5, totalPages: 3, hasNext: true })
      expect(ids(page0)).toEqual(newestFirst.slice(0, 2))
      const page2 = await history(owner, '?size=2&page=2')
      expect(page2.json()).toMatchObject({ page: 2, perPage: 2, hasNext: false })
      expect(ids(page2)).toEqual(newestFirst.slice(4))
      expect((await history(owner, '?size=2&page=9')).json()).toMatchObject({ items: [], total: 5, hasNext: false })
    })

    it('writes every timestamp as the detail view does: UTC, milliseconds, microseconds cut', async () => {
      const { owner } = await academy(app.current)
      const id = await insertMessageRow(owner)
      await ownerDb()
        .updateTable('smsMessages')
        .set({
          createdAt: new Date('2026-01-01T00:01:02.123Z'),
          scheduledAt: new Date('2026-01-02T03:04:05.000Z'),
          sentAt: new Date('2026-01-03T23:59:59.999Z'),
          cancelledAt: null,
        })
        .where('id', '=', id)
        .execute()
      // Microseconds the API never shows: both views must cut them the same way.
      await sql`update sms_messages set updated_at = '2026-01-04 05:06:07.456789+00' where id = ${id}`.execute(ownerDb())
      const [item] = (await history(owner)).json().items
      const full = (await detail(owner, id)).json()
      expect(item).toMatchObject({
        createdAt: '2026-01-01T00:01:02.123Z',
        scheduledAt: '2026-01-02T03:04:05.000Z',
        sentAt: '2026-01-03T23:59:59.999Z',
        cancelledAt: null,
        updatedAt: '2026-01-04T05:06:07.456Z',
      })
      for (const field of ['createdAt', 'scheduledAt', 'sentAt', 'cancelledAt', 'updatedAt']) expect(item[field]).toBe(full[field])
    })

    // The page's items are JSON text written by PostgreSQL, the detail view's by the response schema's serialiser:
    // for the same row they must agree on every key and value, whatever the text holds and whichever column is null.
    it('writes each item as the response schema writes the message: every column, escapes, nulls and numbers', async () => {
      const { owner } = await academy(app.current)
      const awkward = `quote " backslash \\ tab \t newline \n bell \u0007 separator \u2028 tag </script> 가나 😀 {name}`
      const plain = await insertMessageRow(owner, { createdAt: at(1), title: 'plain', content: 'hello {name}' })
      const full = await insertMessageRow(owner, { createdAt: at(2), title: awkward.slice(0, 60), content: awkward.repeat(3) })
      await ownerDb()
        .updateTable('smsMessages')
        .set({
          senderNumber: '0212345678',
          recipientGroupId: 77,
          templateId: 88,
          scheduledAt: new Date('2026-02-03T04:05:06.789Z'),
          cancelledAt: new Date('2026-02-03T05:00:00.000Z'),
          sentAt: new Date('2026-02-03T06:00:00.001Z'),
          messageType: 'LMS',
          estimatedSegments: 3,
          unitPrice: 50,
          totalPrice: 150,
          status: 'PARTIAL',
          successCount: 2,
          failCount: 1,
        })
        .where('id', '=', full)
        .execute()
      const response = await history(owner)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      const items = response.json().items as Record<string, unknown>[]
      expect(items.map((item) => item.id)).toEqual([full, plain])
      for (const item of items) {
        const stored = (await detail(owner, item.id as number)).json()
        const preview = [...(stored.content as string)].slice(0, 80).join('')
        expect(item).toEqual({ ...stored, recipients: [], content: preview })
      }
      expect(items[0]).toMatchObject({ senderNumber: '0212345678', recipientGroupId: 77, templateId: 88, messageType: 'LMS' })
    })

    // Counts the statements the pg driver sends; the embedded store has no pg driver to observe.
    itPostgres('reads an unfiltered page and its total in one statement; a filtered one counts separately', async () => {
      const { owner } = await academy(app.current)
      for (let minute = 0; minute < 3; minute++) await insertMessageRow(owner, { createdAt: at(minute), status: 'SENT' })
      const reads = (queries: RecordedQuery[]) => queries.filter((query) => /sms_message/.test(query.text))
      const plain = await recordQueries(() => history(owner, '?size=2'))
      expect(plain.result.json()).toMatchObject({ total: 3, totalPages: 2 })
      expect(reads(plain.queries)).toHaveLength(1)
      // An index serves this order for any tenant: prepared, where the driver prepares statements (the pipelined
      // one; test/db/history-plans.test.ts checks its generic plan).
      expect(reads(plain.queries)[0]!.name !== undefined).toBe(databaseDriver === 'pipelined')
      const filtered = await recordQueries(() => history(owner, '?size=2&status=SENT'))
      expect(filtered.result.json()).toMatchObject({ total: 3, totalPages: 2 })
      expect(reads(filtered.queries)).toHaveLength(2)
      // Planned for this tenant and this filter every time, never from a prepared generic plan.
      for (const query of reads(filtered.queries)) expect(query.name).toBeUndefined()
    })

    it('breaks ties on createdAt by id so pages never overlap', async () => {
      const { owner } = await academy(app.current)
      const same = at(7)
      const created = [] as number[]
      for (let i = 0; i < 4; i++) created.push(await insertMessageRow(owner, { createdAt: same }))
      const pages = [...ids(await history(owner, '?size=2')), ...ids(await history(owner, '?size=2&page=1'))]
      expect(pages).toEqual([...created].reverse())
    })

    it('filters by status, recipientType and a search term over title and content', async () => {
      const { owner } = await academy(app.current)
      const sent = await insertMessageRow(owner, { status: 'SENT', title: 'Exam results', recipientType: 'GUARDIAN' })
      const failed = await insertMessageRow(owner, { status: 'FAILED', content: 'Tuition is DUE tomorrow', recipientType: 'STUDENT' })
      const pending = await insertMessageRow(owner, { status: 'PENDING', title: '100% off_sale', content: 'x' })
      expect(ids(await history(owner, '?status=SENT'))).toEqual([sent])
      expect(ids(await history(owner, '?recipientType=STUDENT'))).toEqual([failed])
      expect(ids(await history(owner, '?q=exam'))).toEqual([sent])
      expect(ids(await history(owner, '?q=due%20TOMORROW'))).toEqual([failed])
      expect(ids(await history(owner, '?q=100%25'))).toEqual([pending])
      expect(ids(await history(owner, '?q=f_sale'))).toEqual([pending])
      expect(ids(await history(owner, '?q=%25'))).toEqual([pending])
      expect(ids(await history(owner, '?q=_'))).toEqual([pending])
      expect(ids(await history(owner, '?q=exam&status=FAILED'))).toEqual([])
      expect((await history(owner, '?status=SENT')).json().total).toBe(1)
    })

    it('sorts by createdAt, sentAt (unsent last either way) and status, with id as the tiebreaker', async () => {
      const { owner } = await academy(app.current)
      const a = await insertMessageRow(owner, { createdAt: at(1), sentAt: at(30), status: 'SENT' })
      const b = await insertMessageRow(owner, { createdAt: at(2), sentAt: null, status: 'PENDING' })
      const c = await insertMessageRow(owner, { createdAt: at(3), sentAt: at(10), status: 'FAILED' })
      expect(ids(await history(owner))).toEqual([c, b, a])
      expect(ids(await history(owner, '?sort=createdAt,asc'))).toEqual([a, b, c])
      expect(ids(await history(owner, '?sort=createdAt'))).toEqual([a, b, c])
      expect(ids(await history(owner, '?sort=sentAt,desc'))).toEqual([a, c, b])
      expect(ids(await history(owner, '?sort=sentAt,ASC'))).toEqual([c, a, b])
      expect(ids(await history(owner, '?sort=status,asc'))).toEqual([c, b, a])
      expect(ids(await history(owner, '?sort=status,desc'))).toEqual([a, b, c])
    })

    it.each([
      ['a sort field that is not allowed', '?sort=title,asc'],
      ['a sort direction that is not asc or desc', '?sort=createdAt,up'],
      ['an injected sort', '?sort=createdAt;drop table users'],
      ['size 0', '?size=0'],
      ['size 101', '?size=101'],
      ['a negative page', '?page=-1'],
      ['a page that is not a number', '?page=first'],
      ['an unknown status', '?status=DELIVERED'],
      ['a search term over 100 characters', `?q=${'x'.repeat(101)}`],
    ])('refuses %s with VALIDATION_FAILED', async (_label, query) => {
      const { owner } = await academy(app.current)
      expect(problem(await history(owner, query))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
    })

    it('answers AUTH_002 without a token and AUTH_008 for a STUDENT', async () => {
      const { student } = await academy(app.current)
      expect(problem(await history(undefined))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await history(student))).toEqual({ status: 403, code: 'AUTH_008' })
    })
  })

  describe('GET /v1/sms/history/{id}', () => {
    it('shows the full stored content, unrendered, with recipients in order and phones masked', async () => {
      const { owner } = await academy(app.current)
      const content = `${'a'.repeat(150)} {name}`
      const sent = await send(app.current, owner, {
        recipients: [
          { phone: '010-1234-5678', name: 'Kim' },
          { phone: '010-2222-3333', name: 'Lee' },
          { phone: '031-123-4567', name: 'Park' },
        ],
        title: 'Full',
        content,
        scheduledAt: minutesFromNow(60),
      })
      const response = await detail(owner, sent.json().id)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual(sent.json())
      expect(response.json().content).toBe(content)
      expect(response.json().recipients.map((r: { phone: string; name: string }) => [r.phone, r.name])).toEqual([
        ['010-****-5678', 'Kim'],
        ['010-****-3333', 'Lee'],
        ['031-****-4567', 'Park'],
      ])
      expect(response.body).not.toMatch(/0101234|1234-5678/)
    })

    it('lets OWNER and MANAGER read any message and an INSTRUCTOR only own (SMS_NOT_FOUND otherwise)', async () => {
      const { owner, manager, instructor } = await academy(app.current)
      const byOwner = await insertMessageRow(owner)
      const byInstructor = await insertMessageRow(instructor)
      expect((await detail(manager, byInstructor)).statusCode).toBe(200)
      expect((await detail(owner, byInstructor)).statusCode).toBe(200)
      expect((await detail(instructor, byInstructor)).statusCode).toBe(200)
      expect(problem(await detail(instructor, byOwner))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
    })

    it('answers SMS_NOT_FOUND for another tenant’s message and unknown ids', async () => {
      const first = await academy(app.current)
      const second = await academy(app.current)
      const foreign = await insertMessageRow(first.owner)
      expect(problem(await detail(second.owner, foreign))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
      expect(problem(await detail(second.owner, 987_654_321))).toEqual({ status: 404, code: 'SMS_NOT_FOUND' })
    })

    it('answers VALIDATION_FAILED for a bad id, AUTH_002 and AUTH_008', async () => {
      const { owner, student } = await academy(app.current)
      expect(problem(await detail(owner, 'x'))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(problem(await detail(owner, '1e400'))).toEqual({ status: 400, code: 'VALIDATION_FAILED' })
      expect(problem(await detail(undefined, 1))).toEqual({ status: 401, code: 'AUTH_002' })
      expect(problem(await detail(student, 1))).toEqual({ status: 403, code: 'AUTH_008' })
    })
  })
})
