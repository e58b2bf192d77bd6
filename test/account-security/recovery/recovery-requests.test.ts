import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { recoveryRequests } from '../../../lib/account-security/recovery/recovery-requests.js'
import { createDatabaseOutage } from '../../../lib/observability/database-outage.js'
import { createTenant, insertUser, owner } from '../../support/fixtures.js'
import { useTestApp } from '../../support/helper.js'
import { uniquePhone } from '../recovery-bed.js'

const app = useTestApp()

async function verifiedUser() {
  const tenant = await createTenant()
  const user = await insertUser(tenant)
  await owner().updateTable('users').set({ phone: uniquePhone() }).where('id', '=', user.id).execute()
  await owner().updateTable('users').set({ phoneVerifiedAt: new Date() }).where('id', '=', user.id).execute()
  return { entry: { userLoginId: user.userLoginId, customId: tenant.customId }, user }
}

function capturingLog() {
  const lines: Array<Record<string, unknown>> = []
  const log = pino({ level: 'trace' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) as unknown as FastifyBaseLogger
  return { log, lines }
}

const codesOf = (userId: number) => owner().selectFrom('oneTimeCodes').select('purpose').where('userId', '=', userId).execute()

describe('password-reset requests worked off after their answer (lib/account-security/recovery/recovery-requests.ts)', () => {
  const deps = () => ({ db: app.current.db, env: app.current.env, issuing: app.current.oneTimeCodes, secondFactor: app.current.secondFactors })

  it('starts no work before the current answer is on its way, and reports each code queued', async () => {
    let queued = 0
    const requests = recoveryRequests(deps(), { onQueued: () => queued++ })
    const { entry, user } = await verifiedUser()
    const { log } = capturingLog()
    requests.accept(entry, log)
    // Synchronously after accept, and after the promise jobs of this turn: nothing looked up or stored yet.
    await Promise.resolve()
    expect(queued).toBe(0)
    await requests.settled()
    expect(queued).toBe(1)
    expect(await codesOf(user.id)).toEqual([{ purpose: 'PASSWORD_RESET' }])
  })

  it('drops, with a warning, what comes beyond its limit of requests in the works', async () => {
    const requests = recoveryRequests(deps(), { onQueued: () => undefined, limit: 1 })
    const first = await verifiedUser()
    const second = await verifiedUser()
    const { log, lines } = capturingLog()
    requests.accept(first.entry, log)
    requests.accept(second.entry, log)
    await requests.settled()
    expect(await codesOf(first.user.id)).toHaveLength(1)
    expect(await codesOf(second.user.id)).toEqual([])
    expect(lines).toMatchObject([{ level: 40, msg: 'password recovery: too many requests in the works, one dropped' }])
    // Once the first is done, there is room again.
    requests.accept(second.entry, log)
    await requests.settled()
    expect(await codesOf(second.user.id)).toHaveLength(1)
  })

  it('logs a failure of the work as an error, without the entry, and goes on', async () => {
    const requests = recoveryRequests({ ...deps(), db: undefined as never }, { onQueued: () => undefined })
    const { entry } = await verifiedUser()
    const { log, lines } = capturingLog()
    requests.accept(entry, log)
    await requests.settled()
    expect(lines).toMatchObject([{ level: 50, msg: 'password recovery request failed' }])
    expect(JSON.stringify(lines)).not.toContain(entry.userLoginId)
  })

  it('counts failures while the database is out of reach in the outage: one warning, no error per request', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    const unreachable = new Proxy(
      {},
      {
        get: () => {
          throw refused
        },
      },
    )
    const { log, lines } = capturingLog()
    const requests = recoveryRequests({ ...deps(), db: unreachable as never }, { onQueued: () => undefined, outage: createDatabaseOutage(log) })
    for (let i = 0; i < 3; i++) requests.accept((await verifiedUser()).entry, log)
    await requests.settled()
    expect(lines).toMatchObject([{ level: 40, msg: 'database unreachable', source: 'recovery', code: 'ECONNREFUSED' }])
    expect(lines.filter((line) => line.level === 50)).toEqual([])
  })
})
