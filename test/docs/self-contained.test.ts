import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

// Names of the outside documents, built from pieces so that this file does not cite them itself.
const DECISION_RECORD = 'DECI' + 'SIONS'
const SPECIFICATION = 'SP' + 'EC.md'
const STYLE_GUIDE = 'STY' + 'LE.md'
const PROVIDER_NOTES = 'PRO' + 'VIDER.md'
const REVIEW_FINDING = 'fin' + 'ding'
const SIBLING_FOLDER = '../' + 'shared'

/**
 * Citations of documents that live outside the repository: its readers cannot follow them, so a comment or page
 * must say the reason itself. The outside documents' names are upper case; the repository's own pages are lower
 * case (docs/provider.md), which these leave alone.
 */
const OUTSIDE_CITATIONS: RegExp[] = [
  new RegExp(`\\b${DECISION_RECORD}\\b`, 'g'),
  new RegExp(`\\b(?:${[SPECIFICATION, STYLE_GUIDE, PROVIDER_NOTES].map((name) => name.replace('.', '\\.')).join('|')})`, 'g'),
  new RegExp(`\\b${REVIEW_FINDING}\\s+\\d+[a-z]?\\b`, 'gi'),
  new RegExp(SIBLING_FOLDER.replaceAll('.', '\\.'), 'g'),
]

function citationsIn(line: string): string[] {
  return OUTSIDE_CITATIONS.flatMap((pattern) => [...line.matchAll(pattern)].map((match) => match[0]))
}

/** Tracked files and new ones not yet committed (ignored files left out), as paths from the root. */
function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  return [...new Set(listed.split('\0'))].filter((path) => path !== '' && path !== 'package-lock.json')
}

function readText(path: string): string | null {
  try {
    const text = readFileSync(join(ROOT, path), 'utf8')
    return text.includes('\0') ? null : text
  } catch {
    // Deleted in the working tree but still tracked.
    return null
  }
}

describe('the repository stands alone', () => {
  it('recognises each kind of outside citation and leaves the repository\'s own pages alone', () => {
    expect(citationsIn(`// Reuse grace (${DECISION_RECORD} 9), see ${SIBLING_FOLDER}/${SPECIFICATION} and ${STYLE_GUIDE}`)).toEqual([
      DECISION_RECORD,
      SPECIFICATION,
      STYLE_GUIDE,
      SIBLING_FOLDER,
    ])
    expect(citationsIn(`normalised (${REVIEW_FINDING} 9b); ${REVIEW_FINDING.toUpperCase()} 3 of ${PROVIDER_NOTES}`)).toEqual([
      PROVIDER_NOTES,
      `${REVIEW_FINDING} 9b`,
      `${REVIEW_FINDING.toUpperCase()} 3`,
    ])
    expect(citationsIn('the protocol in docs/provider.md#answers; design decisions live in docs/architecture.md')).toEqual([])
    expect(repositoryFiles()).toEqual(expect.arrayContaining(['README.md', 'db/schema.ts', 'db/migrations/index.ts']))
  })

  it('cites no document outside it (decision records, specifications, style guides, review findings)', () => {
    const citations: string[] = []
    for (const path of repositoryFiles()) {
      const text = readText(path)
      if (text === null) continue
      text.split('\n').forEach((line, index) => {
        for (const citation of citationsIn(line)) citations.push(`${path}:${index + 1}: ${citation}`)
      })
    }
    expect(citations, 'say the reason itself instead of citing a document outside the repository').toEqual([])
  })
})
