import { sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateToLatest } from '../../db/migrate.js'
import { migrations } from '../../db/migrations/index.js'
import { owner } from '../support/fixtures.js'
import { databaseFunctions, fileFunctions, functionFiles } from '../support/function-files.js'
import { describePostgres } from '../support/helper.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

/**
 * db/functions holds the one definition of every SQL function; the migrator applies every file after the versioned
 * migrations (db/function-files.ts). What the database runs must be exactly what the files say.
 */
describe('db/functions (the current definition of every SQL function)', () => {
  const files = functionFiles()

  it('has a file for every svc_ function in the migrated database, and a function for every file', async () => {
    const names = (await databaseFunctions(owner())).map((found) => found.name)
    expect(names).toEqual(files.map((file) => file.name))
  })

  for (const { name, text } of files) {
    it(`${name}.sql defines exactly what the database runs: signature, body, attributes, grants`, async () => {
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

    const longerWindows = await variant(text.replace("interval ''10 minutes''", "interval ''11 minutes''"))
    expect(longerWindows?.definition).not.toBe(migrated!.definition)
    expect(longerWindows?.acl).toBe(migrated!.acl)

    const ungranted = await variant(text.replace(/^grant execute .*$/m, ''))
    expect(ungranted?.definition).toBe(migrated!.definition)
    expect(ungranted?.acl).not.toBe(migrated!.acl)

    expect(await variant(text.replace(/^ {2}/gm, '      '))).toEqual(migrated)
  })
})

// On a database of its own: these change functions that every other test file runs.
describePostgres('migrating applies the function files, whatever the database held before', () => {
  let iso: IsolatedDatabase
  beforeAll(async () => {
    iso = await isolatedDatabase()
  })
  afterAll(async () => {
    await iso.drop()
  })

  const migrate = () => migrateToLatest(iso.owner)
  const asFiles = async () => {
    const expected = []
    for (const { text } of functionFiles()) expected.push(...(await fileFunctions(iso.owner, text)))
    return expected
  }

  it('gives a function changed in the database its file definition and grants back, with nothing pending', async () => {
    const { text } = functionFiles().find((file) => file.name === 'svc_purge_expired')!
    await sql.raw(text.replace("interval '10 minutes'", "interval '11 minutes'").replace(/^grant execute .*$/m, '')).execute(iso.owner)
    await sql`revoke execute on function svc_purge_expired(integer) from svc_app`.execute(iso.owner)
    expect(await databaseFunctions(iso.owner)).not.toEqual(await asFiles())

    const result = await migrate()

    expect(result.results).toEqual([])
    expect(await databaseFunctions(iso.owner)).toEqual(await asFiles())
  })

  it('drops a function an older signature left behind, and keeps the current one', async () => {
    // svc_rotate_session before the reuse grace took one argument fewer; a database migrated then still holds it.
    await sql`
      create function svc_rotate_session(bigint, text, uuid, bigint, uuid, uuid, timestamptz, uuid, timestamptz,
        timestamptz, boolean) returns text language sql as $$ select 'OLD' $$`.execute(iso.owner)
    expect((await databaseFunctions(iso.owner)).filter((found) => found.name === 'svc_rotate_session')).toHaveLength(2)

    const result = await migrate()

    expect(result.functions.dropped).toEqual([
      'svc_rotate_session(bigint,text,uuid,bigint,uuid,uuid,timestamp with time zone,uuid,timestamp with time zone,timestamp with time zone,boolean)',
    ])
    expect(await databaseFunctions(iso.owner)).toEqual(await asFiles())
  })

  it('ends a database migrated part of the way, then to the latest, with the same functions as a fresh one', async () => {
    const partial = await isolatedDatabase({ migrated: false })
    try {
      const names = Object.keys(migrations)
      const midway = names[names.indexOf('2026-11-23T03-10-00-refresh-reuse-grace') - 1]!
      const migrator = new Migrator({ db: partial.owner, provider: { getMigrations: async () => migrations } })
      expect((await migrator.migrateTo(midway)).error).toBeUndefined()
      expect(await databaseFunctions(partial.owner)).not.toEqual(await asFiles())

      await migrateToLatest(partial.owner)

      expect(await databaseFunctions(partial.owner)).toEqual(await asFiles())
    } finally {
      await partial.drop()
    }
  })
})
