import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// What a reader of the repository follows: sources, tests, scripts, benchmarks and the docs. Migrations are frozen
// history and keep the words they were written with.
const SCANNED = ['README.md', '.env.example', 'app.ts', 'build.ts', 'server.ts', 'bench', 'db', 'docs', 'lib', 'plugins', 'routes', 'scripts', 'test']
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'migrations'])
const TEXT_FILE = /\.(ts|mjs|cjs|js|md|sh|sql|example)$/

function filesUnder(path: string): string[] {
  const absolute = join(ROOT, path)
  if (!statSync(absolute, { throwIfNoEntry: false })) return []
  if (statSync(absolute).isFile()) return [path]
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(join(path, entry.name))
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
 * Pointers into the repository's own docs: `docs/api.md#<anchor>`, `docs/provider.md#<anchor>` and
 * `README.md#<anchor>` written out in comments (relative to the root), and Markdown links `[text](path#<anchor>)`
 * or `[text](#<anchor>)` (relative to the file).
 */
function citationsIn(file: string, text: string): Citation[] {
  const found: Citation[] = []
  for (const match of text.matchAll(/(?<![\w./])(docs\/api\.md|docs\/provider\.md|README\.md)#([\w-]+)/g)) {
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

  it('cites no document that lives outside the repository', () => {
    // Built from pieces so this file does not match itself.
    const outside = new RegExp(['\\.\\./shared/', '\\bSPEC\\b', 'DECI' + 'SIONS', 'PROVIDER' + '\\.md'].join('|'))
    const citing = [...texts]
      .flatMap(([file, text]) => text.split('\n').map((line, index) => ({ file, line, number: index + 1 })))
      .filter(({ line }) => outside.test(line))
      .map(({ file, number, line }) => `${file}:${number}: ${line.trim().slice(0, 100)}`)
    expect(citing).toEqual([])
  })

  it('finds the headings GitHub would link to', () => {
    const anchors = anchorsOf('# API reference\n## Browsers: CORS and CSRF\n```sh\n# not a heading\n```\n### Rotation\n### Rotation\n')
    expect([...anchors]).toEqual(['api-reference', 'browsers-cors-and-csrf', 'rotation', 'rotation-1'])
  })
})
