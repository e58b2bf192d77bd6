import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ERROR_CATALOG, type ErrorCode } from '../../lib/errors.js'

const API_DOC = new URL('../../docs/api.md', import.meta.url)
const TABLE_HEADING = '### Error codes'

interface DocumentedCode {
  code: string
  status: number
  meaning: string
}

/**
 * The rows of the table under `### Error codes` in docs/api.md (`| \`CODE\` | 400 | meaning |`). Throws when the
 * heading or the table's header is not where the check expects them, so a reshaped page cannot pass by matching
 * nothing.
 */
function documentedCodes(markdown: string): DocumentedCode[] {
  const lines = markdown.split('\n')
  const start = lines.indexOf(TABLE_HEADING)
  if (start === -1) throw new Error(`docs/api.md has no "${TABLE_HEADING}" heading`)
  const section = lines.slice(start + 1)
  const end = section.findIndex((line) => /^#{1,3} /.test(line))
  const table = (end === -1 ? section : section.slice(0, end)).filter((line) => line.startsWith('|'))
  const cells = (line: string) => line.split('|').slice(1, -1).map((cell) => cell.trim())
  const [header, separator, ...rows] = table
  if (!header || JSON.stringify(cells(header)) !== '["code","HTTP","meaning"]' || !separator) {
    throw new Error(`the table under "${TABLE_HEADING}" must start with | code | HTTP | meaning |`)
  }
  return rows.map((row) => {
    const [code = '', status = '', ...meaning] = cells(row)
    return { code: code.replace(/^`(.*)`$/, '$1'), status: Number(status), meaning: meaning.join('|').trim() }
  })
}

/** How the documented rows differ from the catalog; every list is empty when they agree. */
function compareWithCatalog(rows: DocumentedCode[]) {
  const catalog = ERROR_CATALOG as Record<string, readonly [number, string, string]>
  const documented = rows.map((row) => row.code)
  return {
    undocumented: Object.keys(catalog).filter((code) => !documented.includes(code)),
    unknown: documented.filter((code) => !(code in catalog)),
    duplicated: documented.filter((code, index) => documented.indexOf(code) !== index),
    wrongStatus: rows
      .filter((row) => row.code in catalog && catalog[row.code]![0] !== row.status)
      .map((row) => `${row.code}: documented ${row.status}, catalog ${catalog[row.code]![0]}`),
    withoutMeaning: rows.filter((row) => row.meaning === '').map((row) => row.code),
  }
}

describe('the error table in docs/api.md', () => {
  const rows = documentedCodes(readFileSync(API_DOC, 'utf8'))
  const differences = compareWithCatalog(rows)

  it('documents every code of the catalog in lib/errors.ts', () => {
    expect(differences.undocumented, 'codes in lib/errors.ts without a row in docs/api.md "Error codes"').toEqual([])
  })

  it('documents no code the catalog does not have', () => {
    expect(differences.unknown).toEqual([])
  })

  it("gives every code the catalog's HTTP status", () => {
    expect(differences.wrongStatus).toEqual([])
  })

  it('lists every code once, with a meaning', () => {
    expect(differences.duplicated).toEqual([])
    expect(differences.withoutMeaning).toEqual([])
  })

  // The check itself: a table that lost a row, or whose status drifted, must not pass.
  it('notices a removed row and a changed status', () => {
    const code: ErrorCode = 'SMS_NOT_CANCELLABLE'
    const doctored = readFileSync(API_DOC, 'utf8')
      .split('\n')
      .filter((line) => !line.startsWith(`| \`${code}\` |`))
      .join('\n')
      .replace('| `AUTH_017` | 401 |', '| `AUTH_017` | 403 |')
    const found = compareWithCatalog(documentedCodes(doctored))
    expect(found.undocumented).toContain(code)
    expect(found.wrongStatus).toContain('AUTH_017: documented 403, catalog 401')
  })
})
