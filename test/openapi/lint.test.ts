import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../support/helper.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const redocly = join(root, 'node_modules/@redocly/cli/bin/cli.js')

interface LintReport {
  totals: { errors: number; warnings: number }
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>
}

describe('the OpenAPI document under Redocly lint (redocly.yaml: the recommended rules)', () => {
  const app = useTestApp()
  let dir: string | undefined
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('has no errors and no warnings', async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-openapi-lint-'))
    const file = join(dir, 'openapi.json')
    await writeFile(file, JSON.stringify(app.current.swagger(), null, 2))
    // The CLI exits 1 on errors; the JSON report on stdout says what they are either way.
    const output = await promisify(execFile)(
      process.execPath,
      [redocly, 'lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json'],
      { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 16 << 20 },
    ).catch((failure: { stdout?: string; stderr?: string }) => failure)
    const report = JSON.parse(output.stdout ?? '{}') as LintReport
    const problems = (report.problems ?? []).map((problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
    expect({ totals: report.totals, problems, stderr: report.totals ? '' : output.stderr }).toEqual({
      totals: { errors: 0, warnings: 0, ignored: 0 },
      problems: [],
      stderr: '',
    })
  })
})
