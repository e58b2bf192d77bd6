import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { strongPassword } from '../../support/auth-fixtures.js'
import { bearerFor, codeSentTo, createAcademy, insertMember, otherCode, useRecoveryBed } from '../recovery-bed.js'

const bed = useRecoveryBed()

/** Finds `code` as a number of its own: never inside a longer run of digits, nor as the fraction of a timestamp. */
const alone = (code: string) => new RegExp(`(?<![0-9.])${code}(?![0-9])`)

/** Every row of every table of the file's database, as JSON text, read as the owner past RLS. */
async function wholeDatabase(): Promise<string> {
  const { rows: tables } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') order by 1`.execute(bed.owner)
  const texts: string[] = []
  for (const { name } of tables) {
    const { rows } = await sql<{ row: string }>`select row_to_json(t)::text as row from ${sql.table(name)} t`.execute(bed.owner)
    texts.push(...rows.map((row) => `${name}: ${row.row}`))
  }
  return texts.join('\n')
}

describe('where a one-time code never is, once it was sent', () => {
  it('is in no answer, history entry, log line, metric, audit event or table of the database', async () => {
    const tenant = await createAcademy(bed.owner)
    const member = await insertMember(bed.owner, tenant, { verified: false })
    const staff = await insertMember(bed.owner, tenant, { role: 'MANAGER' })
    const memberHeaders = await bearerFor(bed.app, member, tenant)
    const staffHeaders = await bearerFor(bed.app, staff, tenant, 'MANAGER')
    const linesBefore = bed.logLines.length
    const answers: LightMyRequestResponse[] = []
    const call = async (request: InjectOptions) => {
      const answer = await bed.app.inject(request)
      answers.push(answer)
      return answer
    }

    // Phone verification: a wrong try, then the right code.
    expect((await call({ method: 'POST', url: '/v1/me/phone/verification', headers: memberHeaders })).statusCode).toBe(202)
    const verificationCode = await codeSentTo(bed, member.phone!)
    // Handed over and still live: the outbox has erased the text, the code's row holds its hash only.
    const whileLive = [await wholeDatabase()]
    const confirm = (code: string) => call({ method: 'POST', url: '/v1/me/phone/verification/confirm', headers: memberHeaders, payload: { code, password: member.password } })
    expect((await confirm(otherCode(verificationCode))).statusCode).toBe(400)
    expect((await confirm(verificationCode)).statusCode).toBe(200)

    // Password recovery: a wrong try, then the right code.
    const entry = { userLoginId: member.userLoginId, customId: tenant.customId }
    expect((await call({ method: 'POST', url: '/v1/password/forgot', payload: entry })).statusCode).toBe(202)
    const resetCode = await codeSentTo(bed, member.phone!)
    whileLive.push(await wholeDatabase())
    const reset = (code: string) => call({ method: 'POST', url: '/v1/password/reset', payload: { ...entry, code, newPassword: strongPassword() } })
    expect((await reset(otherCode(resetCode))).statusCode).toBe(400)
    expect((await reset(resetCode)).statusCode).toBe(204)

    const history = await call({ method: 'GET', url: '/v1/sms/history', headers: staffHeaders })
    expect(history.statusCode).toBe(200)
    expect(history.json()).toMatchObject({ total: 0, items: [] })
    for (const code of [verificationCode, resetCode]) {
      expect((await call({ method: 'GET', url: `/v1/sms/history?q=${code}`, headers: staffHeaders })).json()).toMatchObject({ total: 0 })
    }
    const metrics = await bed.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.statusCode).toBe(200)
    const events = await bed.owner.selectFrom('auditEvents').selectAll().where('tenantId', '=', tenant.id).execute()
    expect(events.map((event) => event.type).sort()).toEqual(['PASSWORD_RESET', 'PHONE_VERIFIED'])
    const flowLog = bed.logLines.slice(linesBefore).join('\n')
    // The capture works: the requests and the dispatch of both codes were logged.
    expect(flowLog).toContain('/v1/password/reset')
    expect(flowLog).toContain('dispatch batch')
    const database = await wholeDatabase()
    expect(whileLive.join('\n')).toContain('one_time_codes: ')

    for (const code of [verificationCode, resetCode]) {
      const pattern = alone(code)
      for (const answer of answers) expect(answer.body).not.toMatch(pattern)
      expect(metrics.body).not.toMatch(pattern)
      expect(JSON.stringify(events)).not.toMatch(pattern)
      expect(flowLog).not.toMatch(pattern)
      expect(database).not.toMatch(pattern)
      for (const snapshot of whileLive) expect(snapshot).not.toMatch(pattern)
    }
  })
})
