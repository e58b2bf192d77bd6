import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../support/child-processes.js'

// A reader finds a domain's code from its plugin, plugins/<domain>/index.ts, whose header names the domain's
// routes, logic and repositories; the platform's plugins name theirs. So every route file must be named by exactly
// one of them, and every domain folder of lib/ and db/repos/ by its index.
function filesUnder(folder: string): string[] {
  return readdirSync(join(repoRoot, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(repoRoot, join(entry.parentPath, entry.name)))
}

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8')
const domainIndexes = readdirSync(join(repoRoot, 'plugins'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'platform')
  .map((entry) => `plugins/${entry.name}/index.ts`)
const platformPlugins = filesUnder('plugins/platform')
const namers = [...domainIndexes, ...platformPlugins].map((path) => ({ path, text: read(path) }))
const routeFiles = filesUnder('routes').filter((path) => !/\.schemas\.ts$|autohooks\.ts$/.test(path))

describe('the domain map in plugins/', () => {
  it('names every route file in exactly one domain plugin or platform plugin', () => {
    const naming = routeFiles.map((route) => ({
      route,
      namedBy: namers.filter(({ text }) => new RegExp(`(?<![\\w/])${route.replace(/\./g, '\\.')}(?![\\w])`).test(text)).map(({ path }) => path),
    }))
    expect(naming.filter(({ namedBy }) => namedBy.length !== 1)).toEqual([])
  })

  it("names each domain's logic and repositories folder in its index", () => {
    const domainFolders = (root: string) =>
      readdirSync(join(repoRoot, root), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${root}/${entry.name}/`)
    const unnamed = [...domainFolders('db/repos'), ...domainFolders('lib').filter((folder) => existsAsDomain(folder))]
      .filter((folder) => !namers.some(({ text }) => text.includes(folder)))
    expect(unnamed).toEqual([])
  })

  it('has one plugin per domain folder', () => {
    expect(domainIndexes.sort()).toEqual(
      ['account-security', 'advertising', 'api-keys', 'audit', 'dispatch', 'events', 'kakao', 'passkeys', 'sign-in', 'sms', 'tenancy'].map((name) => `plugins/${name}/index.ts`),
    )
  })
})

/** lib/'s folders that are domains: those a db/repos/ folder of the same name mirrors. */
function existsAsDomain(folder: string): boolean {
  const name = folder.split('/')[1]!
  return readdirSync(join(repoRoot, 'db/repos'), { withFileTypes: true }).some((entry) => entry.isDirectory() && entry.name === name)
}
