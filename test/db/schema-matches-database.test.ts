import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, expect, it } from 'vitest'
import { describePostgres } from '../support/helper.js'
import { isolatedDatabase } from '../support/isolated-database.js'
import { readDatabaseTables, type DatabaseTables } from './database-columns.js'
import { schemaDifferences } from './schema-differences.js'
import { readSchemaDeclarations } from './schema-declarations.js'

const SCHEMA_FILE = fileURLToPath(new URL('../../db/schema.ts', import.meta.url))

/** `text` with each `[from, to]` applied; `from` must occur exactly once, so a reworded schema fails loudly. */
function edited(text: string, edits: [string, string][]): string {
  return edits.reduce((result, [from, to]) => {
    expect(result.split(from).length - 1, `occurrences of ${JSON.stringify(from)} in db/schema.ts`).toBe(1)
    return result.replace(from, to)
  }, text)
}

describePostgres('db/schema.ts', () => {
  let database: DatabaseTables

  beforeAll(async () => {
    // Only what the migrations build: other test files alter the run's database (a legacy users column).
    const iso = await isolatedDatabase()
    const app = iso.open(1)
    try {
      database = await readDatabaseTables(iso.owner, app.db)
    } finally {
      await app.close()
      await iso.drop()
    }
  })

  it('declares every table and column of the migrated database with its type, nullability and default', () => {
    const differences = schemaDifferences(readSchemaDeclarations(SCHEMA_FILE), database)
    expect(differences, 'db/schema.ts differs from the migrated database').toEqual([])
  })

  it('reports a dropped property, a NOT NULL column typed nullable, a string typed as a number, a narrowed union', () => {
    const text = readFileSync(SCHEMA_FILE, 'utf8')
    const before = schemaDifferences(readSchemaDeclarations(SCHEMA_FILE, text), database)
    const changed = edited(text, [
      ['  slug: string\n', ''],
      ['  passwordHash: string\n', '  passwordHash: string | null\n'],
      ['  title: string\n', '  title: number\n'],
      ["TenantStatus = 'ACTIVE' | 'SUSPENDED' | 'CLOSED'", "TenantStatus = 'ACTIVE' | 'SUSPENDED'"],
    ])
    const after = schemaDifferences(readSchemaDeclarations(SCHEMA_FILE, changed), database)
    expect(after.filter((difference) => !before.includes(difference))).toEqual([
      'smsMessages.title (sms_messages.title character varying(200) not null): the driver reads it as string, db/schema.ts declares number',
      'tenants.slug (tenants.slug character varying(63) not null): missing from db/schema.ts',
      'tenants.status (tenants.status character varying(20) not null): the database allows ACTIVE, CLOSED, SUSPENDED; db/schema.ts declares ACTIVE, SUSPENDED',
      'users.passwordHash (users.password_hash character varying(100) not null): NOT NULL, but the select type string | null includes null',
      // Kysely lets an insert leave out a column whose insert type admits null.
      'users.passwordHash (users.password_hash character varying(100) not null): has no default, so an insert must give it, but its declared insert type lets Kysely leave it out',
    ])
  })
})
