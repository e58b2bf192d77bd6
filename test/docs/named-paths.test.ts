import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/child-processes.js'

// Every file or folder of the repository that a page, a comment or a message names must exist: a reader follows
// them. Migrations and recorded benchmark results are history and keep the paths they were written with.
const SCANNED = ['README.md', 'CONTRIBUTING.md', 'docs', '.env.example', 'Dockerfile', 'docker-compose.yml', 'package.json',
  'vitest.config.ts', 'app.ts', 'build.ts', 'server.ts', 'bench', 'db', 'lib', 'plugins', 'routes', 'scripts', 'test', '.ci']
const HISTORY = new Set(['node_modules', 'dist', 'migrations', 'results'])
// Folders that tools write when they run (a benchmark's checkout of another commit, CPU profiles), absent in a clone.
const TOOL_OUTPUT = ['bench/.build', 'bench/profiles']
// What a file names in another commit's tree: the benchmarks build older commits, whose fakes lived elsewhere
// (and this file names that folder to allow it).
const OLD_FAKES = ['test/fakes']
const OTHER_COMMITS: Record<string, string[]> = { 'bench/lib/ref-build.ts': OLD_FAKES, 'test/docs/named-paths.test.ts': OLD_FAKES }
const TEXT_FILE = /\.(ts|mjs|cjs|js|md|sh|sql|example|json|yml|html)$|^(run|Dockerfile)$/

function filesUnder(path: string): string[] {
  const stat = statSync(join(repoRoot, path), { throwIfNoEntry: false })
  if (!stat) return []
  if (stat.isFile()) return [path]
  return readdirSync(join(repoRoot, path), { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return HISTORY.has(entry.name) ? [] : filesUnder(join(path, entry.name))
    return TEXT_FILE.test(entry.name) ? [join(path, entry.name)] : []
  })
}

/**
 * Paths from the root that a text names: `lib/sms/sizing.ts`, `plugins/platform/`, `test/support/helper.ts`. Not a
 * relative import (`../lib/x.js` is checked by the compiler), a glob (`test/**`), a placeholder (`plugins/<domain>`)
 * or a part of a longer path or a URL.
 */
export function namedPaths(text: string): string[] {
  const found: string[] = []
  const pattern = /(?<![\w./@=-])((?:app|build|server)\.ts|(?:plugins|routes|lib|db|test|scripts|bench|docs|docker)\/[\w./-]*[\w-]\/?)/g
  for (const match of text.matchAll(pattern)) {
    const next = text[match.index + match[0].length]
    if (next === '*' || next === '<' || next === '{') continue
    found.push(match[1]!)
  }
  return found
}

describe('the paths the repository names', () => {
  it('exist, in every page, comment and message', () => {
    const missing = SCANNED.flatMap(filesUnder).flatMap((file) =>
      namedPaths(readFileSync(join(repoRoot, file), 'utf8'))
        .filter((path) => !TOOL_OUTPUT.some((folder) => path.startsWith(folder)))
        .filter((path) => !OTHER_COMMITS[file]?.some((folder) => path.startsWith(folder)))
        .filter((path) => !statSync(join(repoRoot, path), { throwIfNoEntry: false }))
        .map((path) => `${file}: ${path}`),
    )
    expect([...new Set(missing)]).toEqual([])
  })

  it('reads a path where prose names it, and not a relative import, a glob or a placeholder', () => {
    const text = "see `lib/sms/sizing.ts` and plugins/platform/; import '../lib/x.js'; test/**/*.ts; plugins/<domain>/index.ts"
    expect(namedPaths(text)).toEqual(['lib/sms/sizing.ts', 'plugins/platform/'])
  })
})
