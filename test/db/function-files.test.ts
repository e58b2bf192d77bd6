import { describe, expect, it } from 'vitest'
import { owner } from '../fixtures.js'
import { databaseFunctions, fileFunctions, functionFiles } from '../function-files.js'

/**
 * db/functions holds each SQL function as the migrations leave it, for readers; migrations keep their own literal
 * copies (frozen history). This is what keeps the two from drifting apart (db/functions/README.md).
 */
describe('db/functions (the current definition of every SQL function)', () => {
  const files = functionFiles()

  it('has a file for every svc_ function in the migrated database, and a function for every file', async () => {
    const names = (await databaseFunctions(owner())).map((found) => found.name)
    expect(names).toEqual(files.map((file) => file.name))
  })

  for (const { name, text } of files) {
    it(`${name}.sql defines exactly what the migrations left: signature, body, attributes, grants`, async () => {
      const migrated = (await databaseFunctions(owner())).filter((found) => found.name === name)
      expect(migrated).toHaveLength(1)
      expect(await fileFunctions(owner(), text)).toEqual(migrated)
    })
  }

  it('tells a changed body or a missing grant from the database, and ignores indentation', async () => {
    const { text } = files.find((file) => file.name === 'svc_purge_expired')!
    const [migrated] = await databaseFunctions(owner()).then((all) => all.filter((found) => found.name === 'svc_purge_expired'))
    const variant = async (changed: string) => {
      expect(changed).not.toBe(text)
      return (await fileFunctions(owner(), changed))[0]
    }

    const longerWindows = await variant(text.replace("interval '10 minutes'", "interval '11 minutes'"))
    expect(longerWindows?.definition).not.toBe(migrated!.definition)
    expect(longerWindows?.acl).toBe(migrated!.acl)

    const ungranted = await variant(text.replace(/^grant execute .*$/m, ''))
    expect(ungranted?.definition).toBe(migrated!.definition)
    expect(ungranted?.acl).not.toBe(migrated!.acl)

    expect(await variant(text.replace(/^ {2}/gm, '      '))).toEqual(migrated)
  })
})
