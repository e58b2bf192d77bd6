/**
 * What writing audit events costs a login and a send: the build of the commit before the audit log was added
 * (`without`) against the working tree's (`with`), in the same run, measured in turns like `npm run bench:compare`
 * (each on a fresh database it migrates itself, seeded alike). A login writes LOGIN_SUCCEEDED in its session
 * transaction; a send writes SMS_ACCEPTED in its request transaction. Target: with >= 0.95 x without.
 * The base is found in git history (the commit that added the audit log's migration, minus one), so the scenario
 * needs the repository's history; it fails, saying so, in a shallow clone.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { commitSubject, refBuild, resolveCommit } from '../lib/ref-build.js'
import { REPO_ROOT, serviceBuild } from '../lib/service.js'
import { compareHttp, HTTP_LOADS, type Side } from './compare.js'

const AUDIT_MIGRATION = 'db/migrations/2026-11-26T04-00-00-audit-events.ts'
const MINIMUM = 0.95

async function commitBeforeAuditLog(): Promise<string> {
  const { stdout } = await promisify(execFile)('git', ['log', '--diff-filter=A', '--format=%H', '-1', '--', AUDIT_MIGRATION], { cwd: REPO_ROOT })
  const added = stdout.trim()
  const before = added ? await resolveCommit(`${added}~1`) : null
  if (!before) throw new Error(`no commit before ${AUDIT_MIGRATION} was added in this clone's history`)
  return before
}

export async function auditCost(ctx: BenchContext): Promise<void> {
  const base = await commitBeforeAuditLog()
  const sides: [Side, Side] = [
    { label: 'base', describe: `without the audit log: ${await commitSubject(base)}`, build: await refBuild(base) },
    { label: 'head', describe: 'with the audit log: the working tree', build: await serviceBuild() },
  ]
  for (const key of ['login', 'send']) {
    const load = HTTP_LOADS.find((candidate) => candidate.key === key)!
    const row = await compareHttp(ctx, sides, load)
    const ratio = row.head / row.base
    ctx.addRow({
      scenario: `audit log: ${row.load}`,
      value: row.head,
      unit: row.unit,
      ...(row.p50 ? { p50: row.p50[1] } : {}),
      baseline: 'the same without the audit log',
      baselineValue: row.base,
      ratio,
      target: `>= ${MINIMUM} x without`,
      met: ratio >= MINIMUM,
      notes: `without ${sides[0].describe}; runs in turns (without / with): ${row.pairs.map(([b, h]) => `${b.value.toFixed(0)} / ${h.value.toFixed(0)}`).join('; ')}`,
    })
  }
}

if (isMain(import.meta.url)) await runStandalone(auditCost)
