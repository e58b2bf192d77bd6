import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/child-processes.js'

// CONTRIBUTING's "Add an endpoint" walks through a real route. Whatever it quotes as code must be found, word for
// word, in the files it names, so a change to the route, its schemas, its logic, its repository or its tests that
// the recipe no longer describes fails here instead of leaving the recipe wrong.
const contributing = readFileSync(join(repoRoot, 'CONTRIBUTING.md'), 'utf8')
const start = contributing.indexOf('## Add an endpoint')
const example = contributing.slice(start, contributing.indexOf('An idempotent route', start))

const REPO_PATH = /(?<![\w./-])((?:plugins|routes|lib|db|test)\/[\w./-]*[\w-])(?![\w<])/g
const namedFiles = [...new Set([...example.matchAll(REPO_PATH)].map((match) => match[1]!))]
// This file is named too, and holds the sentinel quote below.
const THIS_FILE = 'test/docs/contributing-example.test.ts'
const spans = [...example.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
// A quoted line of code (a call, a declaration, a literal), not a bare name, a command or a placeholder.
const quotedCode = spans.filter((span) => /[(){}:='"]/.test(span) && !span.includes('<') && !span.startsWith('npx '))
const squash = (text: string) => text.replace(/\s+/g, ' ')

describe("CONTRIBUTING's worked example", () => {
  const texts = namedFiles
    .filter((path) => path !== THIS_FILE && statSync(join(repoRoot, path), { throwIfNoEntry: false })?.isFile())
    .map((path) => squash(readFileSync(join(repoRoot, path), 'utf8')))

  it('names files that exist: the route, its schemas, logic, repository, access test and tests', () => {
    expect(namedFiles.filter((path) => !statSync(join(repoRoot, path), { throwIfNoEntry: false }))).toEqual([])
    for (const expected of [
      'routes/v1/me/phone-verification.ts',
      'routes/v1/me/phone-verification.schemas.ts',
      'lib/account-security/phone/phone-verification.ts',
      'db/repos/account-security/one-time-codes.ts',
      'test/platform/access.test.ts',
      'test/account-security/phone/phone-verification.test.ts',
    ]) {
      expect(namedFiles).toContain(expected)
    }
  })

  it('quotes only code that is in those files', () => {
    expect(quotedCode.length).toBeGreaterThan(10)
    expect(quotedCode.filter((span) => !texts.some((text) => text.includes(squash(span))))).toEqual([])
  })

  it('would notice a quote the code does not hold: the signature the recipe once gave', () => {
    expect(texts.some((text) => text.includes(squash('requestPhoneVerification(trx: TenantTx, userId)')))).toBe(false)
  })
})
