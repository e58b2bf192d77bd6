import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// What a reader of the repository follows: the pages, sources, tests, scripts, benchmarks and deployment files.
// Migrations are frozen history and keep the words they were written with.
const SCANNED = [
  'README.md',
  'CONTRIBUTING.md',
  'docs',
  '.env.example',
  'Dockerfile',
  'docker-compose.yml',
  'package.json',
  'docker',
  'app.ts',
  'build.ts',
  'server.ts',
  'bench',
  'db',
  'lib',
  'plugins',
  'routes',
  'scripts',
  'test',
]
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'migrations'])
// Hidden folders hold tools' output (bench/.build: another commit's checkout for a comparison), not the repository's.
const isSkippedDir = (name: string) => SKIPPED_DIRS.has(name) || name.startsWith('.')
const TEXT_FILE = /\.(ts|mjs|cjs|js|md|sh|sql|example)$/

function filesUnder(path: string): string[] {
  const absolute = join(ROOT, path)
  if (!statSync(absolute, { throwIfNoEntry: false })) return []
  if (statSync(absolute).isFile()) return [path]
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return isSkippedDir(entry.name) ? [] : filesUnder(join(path, entry.name))
    return TEXT_FILE.test(entry.name) ? [join(path, entry.name)] : []
  })
}

/** GitHub's heading anchors: lower case, punctuation dropped, each space a hyphen, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  let fenced = false
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line)
    if (!heading) continue
    const base = heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`
    anchors.add(anchor)
  }
  return anchors
}

interface Citation {
  from: string
  target: string
  anchor: string
}

/**
 * Pointers into the repository's own pages: `docs/<page>.md#<anchor>`, `README.md#<anchor>`,
 * `CONTRIBUTING.md#<anchor>` and `<folder>/README.md#<anchor>` written out in comments (relative to the root), and
 * Markdown links `[text](path#<anchor>)` or `[text](#<anchor>)` (relative to the file).
 */
function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = []
  for (const match of text.matchAll(/(?<![\w./])(docs\/[\w-]+\.md|(?:[\w-]+\/)*README\.md|CONTRIBUTING\.md)#([\w-]+)/g)) {
    found.push({ from: file, target: match[1]!, anchor: match[2]! })
  }
  if (file.endsWith('.md')) {
    for (const match of text.matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
      const target = match[1] === '' ? file : normalize(join(dirname(file), match[1]!))
      if (target.endsWith('.md')) found.push({ from: file, target, anchor: match[2]! })
    }
  }
  return found
}

/** The files and folders that Markdown links name, relative to the linking file; web addresses are not followed. */
function linkedPathsIn(file: string, text: string): Array<{ from: string; target: string }> {
  if (!file.endsWith('.md')) return []
  return [...text.matchAll(/\]\(([^)\s#<>]+)(?:#[^)\s]*)?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ from: file, target: normalize(join(dirname(file), target)) }))
}

describe('the documentation a clone of the repository carries', () => {
  const files = SCANNED.flatMap(filesUnder)
  const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]))

  it('resolves every pointer into docs/ and the README to an existing heading', () => {
    const anchors = new Map<string, Set<string>>()
    const broken: string[] = []
    for (const [file, text] of texts) {
      for (const citation of citationsIn(file, text)) {
        const target = relative(ROOT, join(ROOT, citation.target))
        if (!anchors.has(target)) {
          const markdown = texts.get(target) ?? (statSync(join(ROOT, target), { throwIfNoEntry: false }) ? readFileSync(join(ROOT, target), 'utf8') : '')
          anchors.set(target, anchorsOf(markdown))
        }
        if (!anchors.get(target)!.has(citation.anchor)) broken.push(`${citation.from}: ${target}#${citation.anchor}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('links only to files and folders that exist', () => {
    const missing = [...texts]
      .flatMap(([file, text]) => linkedPathsIn(file, text))
      .filter(({ target }) => !statSync(join(ROOT, target), { throwIfNoEntry: false }))
      .map(({ from, target }) => `${from}: ${target}`)
    expect(missing).toEqual([])
  })

  it('maps every page from the README', () => {
    const linked = new Set(linkedPathsIn('README.md', texts.get('README.md') ?? '').map(({ target }) => target))
    const pages = ['CONTRIBUTING.md', ...files.filter((file) => file.startsWith('docs/') && file.endsWith('.md'))]
    expect(pages.filter((page) => !linked.has(page))).toEqual([])
  })

  it('finds the headings GitHub would link to', () => {
    const anchors = anchorsOf('# API reference\n## Browsers: CORS and CSRF\n```sh\n# not a heading\n```\n### Rotation\n### Rotation\n')
    expect([...anchors]).toEqual(['api-reference', 'browsers-cors-and-csrf', 'rotation', 'rotation-1'])
  })
})
