/**
 * Another user's GET /v1/me while 40 connections send wrong current passwords to POST /v1/me/password, each as a
 * signed-in user of its own (so no lockout ends the load). A password change compares and hashes with bcrypt; if
 * it held a pooled connection meanwhile, the attackers would take the whole pool (10) and everyone else would
 * queue. Measured on one connection: the victim's p50 idle, then under the attack. Target: at most 2 x idle.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { log, runLoad, runLoadNow } from '../lib/load.js'
import { bearer, heading } from '../lib/scenario-helpers.js'
import { loginStaff } from '../lib/seed.js'
import { withSeededService } from '../lib/service-scenario.js'

const ATTACKERS = 40

export async function passwordPressure(ctx: BenchContext): Promise<void> {
  heading('GET /v1/me under 40 concurrent wrong password changes')
  const database = await ctx.database()
  const options = { databaseUrl: database.url, owner: database.owner, name: 'service-password-pressure', staff: ATTACKERS + 1 }
  await withSeededService(ctx, options, async (service, tenant) => {
    const [victim, ...attackers] = await loginStaff(service.url, tenant)
    const watch = { service: service.pid }
    const victimLoad = { url: service.url, method: 'GET' as const, path: '/v1/me', connections: 1, duration: benchConfig.duration, connectionHeaders: [bearer(victim!.access)] }
    const idle = await runLoad(victimLoad, watch)
    log(`  victim idle: p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms (${idle.rps.toFixed(0)} req/s)`)
    const attack = runLoadNow(
      {
        url: service.url,
        method: 'POST',
        path: '/v1/me/password',
        connections: ATTACKERS,
        duration: benchConfig.duration + 3,
        headers: { 'content-type': 'application/json' },
        connectionHeaders: attackers.map((session) => bearer(session.access)),
        body: JSON.stringify({ currentPassword: 'not-the-password', newPassword: 'Another-Passw0rd-2027' }),
      },
      watch,
    )
    // The attack's connections are open and hashing before the victim's measurement starts.
    await sleep(1500)
    const pressed = await runLoadNow(victimLoad, watch)
    const attacked = await attack
    log(`  victim under attack: p50 ${pressed.p50.toFixed(2)} ms, p99 ${pressed.p99.toFixed(2)} ms (${pressed.rps.toFixed(0)} req/s)`)
    log(`  attackers: ${attacked.ok + attacked.non2xx} answers (${attacked.non2xx} refusals, as expected), ${attacked.errors} errors, ${attacked.timeouts} timeouts`)
    const ratio = pressed.p50 / idle.p50
    ctx.addRow({
      scenario: 'GET /v1/me p50 under 40 wrong password changes',
      value: pressed.rps,
      unit: 'req/s',
      p50: pressed.p50,
      p99: pressed.p99,
      baseline: 'the same, idle',
      baselineValue: idle.rps,
      ratio,
      target: 'p50 <= 2 x idle',
      met: ratio <= 2,
      notes: `idle p50 ${idle.p50.toFixed(2)} ms; ${attacked.non2xx + attacked.ok} password answers`,
    })
  })
}

if (isMain(import.meta.url)) await runStandalone(passwordPressure)
