/**
 * `npm run bench`: every scenario against its baselines, on this machine, in one run. Prints the table and writes
 * bench/results/<YYYY-MM-DD>.md. Benchmarks print figures; they never fail on a missed target.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { main } from './lib/cleanup.js'
import { benchConfig } from './lib/config.js'
import { BenchContext, type Scenario } from './lib/context.js'
import { serverVersion } from './lib/database.js'
import { log } from './lib/load.js'
import { printTables, resultsMarkdown } from './lib/report.js'
import { measuredBuild, REPO_ROOT } from './lib/service.js'
import { advertisement } from './scenarios/advertisement.js'
import { adConsent } from './scenarios/ad-consent.js'
import { auditCost } from './scenarios/audit-cost.js'
import { auditLog } from './scenarios/audit-log.js'
import { dispatch } from './scenarios/dispatch.js'
import { forgot } from './scenarios/forgot.js'
import { history } from './scenarios/history.js'
import { login } from './scenarios/login.js'
import { me } from './scenarios/me.js'
import { memory } from './scenarios/memory.js'
import { mfa } from './scenarios/mfa.js'
import { passkey } from './scenarios/passkey.js'
import { pooler } from './scenarios/pooler.js'
import { refresh } from './scenarios/refresh.js'
import { scale } from './scenarios/scale.js'
import { send10k } from './scenarios/send-10k.js'
import { alimtalkSend } from './scenarios/alimtalk-send.js'
import { alimtalkDispatch } from './scenarios/alimtalk-dispatch.js'
import { apiKeys } from './scenarios/api-keys.js'
import { signingKeys } from './scenarios/signing-keys.js'
import { usage } from './scenarios/usage.js'
import { webhooks } from './scenarios/webhooks.js'

const SCENARIOS: [string, Scenario][] = [
  ['me', me],
  ['login', login],
  ['mfa', mfa],
  ['passkey', passkey],
  ['refresh', refresh],
  ['signing-keys', signingKeys],
  ['history', history],
  ['audit-log', auditLog],
  ['usage', usage],
  ['send-10k', send10k],
  ['alimtalk-send', alimtalkSend],
  ['alimtalk-dispatch', alimtalkDispatch],
  ['api-keys', apiKeys],
  ['advertisement', advertisement],
  ['ad-consent', adConsent],
  ['dispatch', dispatch],
  ['webhooks', webhooks],
  ['pooler', pooler],
  ['memory', memory],
  ['forgot', forgot],
  ['audit-cost', auditCost],
  ['scale', scale],
]

async function machineFacts(): Promise<string[]> {
  const build = measuredBuild()
  return [
    `- CPU: ${availableParallelism()} cores (nproc), ${cpus()[0]?.model ?? 'unknown'}; ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Linux ${release()}`,
    `- Node ${process.version}; PostgreSQL ${await serverVersion()} on 127.0.0.1 (${
      benchConfig.pgSettings.length ? `experiment: ${benchConfig.pgSettings.map((s) => `${s.name}=${s.value}`).join(', ')}` : 'stock settings'
    })`,
    `- Service: commit ${build?.commit ?? 'unknown'} when built` +
      (build && build.uncommitted.length > 0
        ? `, plus uncommitted changes in the working tree (${build.uncommitted.join(', ')})`
        : ', clean working tree for service files'),
    `- Load: autocannon 8 in a separate process, ${benchConfig.connections} connections, ${benchConfig.warmup} s warm-up then ${benchConfig.runs} runs of ${benchConfig.duration} s; the service, PostgreSQL, the load generator and the baselines share the machine`,
  ]
}

await main(async () => {
  const started = Date.now()
  const only = process.argv.slice(2)
  const ctx = new BenchContext()
  const failed: string[] = []
  for (const [name, scenario] of SCENARIOS) {
    if (only.length > 0 && !only.includes(name)) continue
    const scenarioStarted = Date.now()
    try {
      await scenario(ctx)
    } catch (error) {
      // One broken scenario must not cost the figures of the others; the table says it failed.
      console.error(error)
      failed.push(name)
      ctx.note(`scenario ${name} FAILED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`)
    }
    log(`  (${name} took ${((Date.now() - scenarioStarted) / 1000).toFixed(0)} s)`)
  }
  const baselines = await ctx.baselineFigures()
  printTables(ctx.rows, baselines, ctx.notes, ctx.capacity)
  const minutes = ((Date.now() - started) / 60_000).toFixed(1)
  if (only.length > 0) {
    log(`\nscenarios ${only.join(', ')} only: no results file written (${minutes} min)`)
    return
  }
  const date = new Date().toISOString().slice(0, 10)
  const file = join(REPO_ROOT, 'bench', 'results', `${date}.md`)
  const markdown = [
    `# Benchmark results, ${date}`,
    '',
    `\`npm run bench\`, ${minutes} min. Production settings: NODE_ENV=production, bcrypt cost 10, LOG_LEVEL=warn, pool 10, one fresh database per scenario.`,
    '',
    ...(await machineFacts()),
    '',
    resultsMarkdown(ctx.rows, baselines, ctx.capacity),
    '',
    ...(ctx.notes.length ? ['Notes:', '', ...ctx.notes.map((note) => `- ${note}`), ''] : []),
  ].join('\n')
  await mkdir(join(REPO_ROOT, 'bench', 'results'), { recursive: true })
  await writeFile(file, markdown)
  log(`\nwrote ${file} (${minutes} min)`)
  if (failed.length > 0) process.exitCode = 1
})
