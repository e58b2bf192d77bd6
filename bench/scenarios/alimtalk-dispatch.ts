/**
 * Dispatch of KakaoTalk notices against the same dispatch of SMS, in turns on one instance and one loopback fake
 * provider (latency 0): PENDING messages of 100 recipients each, AlimTalk ones naming the fake's approved template
 * with a message-wide value and each recipient's name and class, so each notice's text is rendered and checked
 * against the template as the provider does. recipients/s from the first claim to the last message DISPATCHED.
 * Target: AlimTalk >= 0.9 x the SMS rate.
 */
import { stopChild } from '../lib/cleanup.js'
import { benchConfig } from '../lib/config.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { dispatcherEnv, dispatchMessagesAt, dispatchOnce, measuredDispatchRun, startFake, type DispatchRun } from '../lib/dispatch-run.js'
import { median } from '../lib/load.js'
import { heading } from '../lib/scenario-helpers.js'
import { startService } from '../lib/service.js'

export async function alimtalkDispatch(ctx: BenchContext): Promise<void> {
  heading('dispatch: KakaoTalk notices against SMS, in turns')
  const database = await ctx.database()
  const fake = await startFake(0)
  const instance = await startService({ databaseUrl: database.url, jwtSecret: ctx.jwtSecret, name: 'service-dispatch-alimtalk', env: dispatcherEnv(fake.url) })
  const messages = dispatchMessagesAt(0)
  const runs: Record<'SMS' | 'ALIMTALK', DispatchRun[]> = { SMS: [], ALIMTALK: [] }
  try {
    for (const channel of ['SMS', 'ALIMTALK'] as const) await dispatchOnce(database, [instance], fake.child, Math.max(10, Math.round(messages / 4)), channel)
    for (let run = 0; run < benchConfig.runs; run++) {
      for (const channel of ['SMS', 'ALIMTALK'] as const) {
        runs[channel].push(
          await measuredDispatchRun(`dispatch ${channel}: run ${run + 1}/${benchConfig.runs}`, () => dispatchOnce(database, [instance], fake.child, messages, channel)),
        )
      }
    }
  } finally {
    await instance.stop()
    await stopChild(fake.child)
  }
  const sms = median(runs.SMS.map((run) => run.recipientsPerSecond))
  const alimtalk = median(runs.ALIMTALK.map((run) => run.recipientsPerSecond))
  ctx.addRow({
    scenario: `dispatch of KakaoTalk notices, 1 instance, ${messages} msgs x ${benchConfig.dispatchRecipients} recipients`,
    value: alimtalk,
    unit: 'recipients/s',
    baseline: 'the same dispatch of SMS, in turns',
    baselineValue: sms,
    ratio: alimtalk / sms,
    target: '>= 0.9 x the SMS dispatch',
    met: alimtalk / sms >= 0.9,
    notes: `runs ${runs.ALIMTALK.map((run) => run.recipientsPerSecond.toFixed(0)).join(', ')} / ${runs.SMS.map((run) => run.recipientsPerSecond.toFixed(0)).join(', ')} recipients/s`,
  })
}

if (isMain(import.meta.url)) await runStandalone(alimtalkDispatch)
