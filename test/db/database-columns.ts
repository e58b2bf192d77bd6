import { sql, type Kysely } from 'kysely'
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE } from 'kysely/migration'
import type { Category } from './schema-declarations.js'

/** One column of the migrated database, as the catalog describes it and the app's driver reads it. */
export interface DatabaseColumn {
  /** As PostgreSQL prints it: `character varying(20)`, `bigint[]`. */
  type: string
  /** What the app's driver turns a value of this type into (see `readCategories`). */
  category: Category
  nullable: boolean
  /** The allowed values of an enum, or of a CHECK `col in ('A', 'B')`; null when the column allows any value. */
  literals: string[] | null
  /** Why an insert may leave it out (a default, identity, a generated column, a trigger); null when it may not. */
  filledBy: string | null
}

/** Table -> column -> description, both as the database names them (snake_case). */
export type DatabaseTables = Map<string, Map<string, DatabaseColumn>>

// A text value of each type the driver is asked to parse; a type missing here is reported, not guessed.
const SAMPLES: Record<string, string> = {
  int2: '1',
  int4: '1',
  int8: '1',
  numeric: '1',
  float4: '1',
  float8: '1',
  text: 'a',
  varchar: 'a',
  bpchar: 'a',
  citext: 'a',
  name: 'a',
  uuid: '00000000-0000-4000-8000-000000000000',
  inet: '127.0.0.1',
  cidr: '127.0.0.0/8',
  bool: 't',
  date: '2000-01-01',
  timestamp: '2000-01-01 00:00:00',
  timestamptz: '2000-01-01 00:00:00+00',
  time: '00:00:00',
  json: '{}',
  jsonb: '{}',
  bytea: '\\x00',
}

interface ColumnRow {
  tableName: string
  columnName: string
  type: string
  elementType: string | null
  scalarName: string
  labels: string[] | null
  nullable: boolean
  filledBy: string | null
}

/**
 * Reads every table of the current schema except Kysely's migration bookkeeping. `owner` reads the catalog; `app`
 * is a connection opened the way the service opens its own, and decides what each type becomes in JavaScript.
 */
export async function readDatabaseTables(owner: Kysely<any>, app: Kysely<any>): Promise<DatabaseTables> {
  const { rows } = await sql<ColumnRow>`
    select c.relname as table_name, a.attname as column_name, format_type(a.atttypid, a.atttypmod) as type,
           case when t.typcategory = 'A' then format_type(t.typelem, a.atttypmod) end as element_type,
           coalesce(base.typname, s.typname) as scalar_name,
           (select array_agg(l.enumlabel::text order by l.enumsortorder) from pg_enum l where l.enumtypid = s.oid) as labels,
           not a.attnotnull as nullable,
           case when a.attidentity <> '' then 'an identity column'
                when a.attgenerated <> '' then 'a generated column'
                when a.atthasdef then 'default ' || pg_get_expr(d.adbin, d.adrelid) end as filled_by
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    join pg_type t on t.oid = a.atttypid
    join pg_type s on s.oid = case when t.typcategory = 'A' then t.typelem else t.oid end
    left join pg_type base on base.oid = s.typbasetype and s.typtype = 'd'
    left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
      and c.relname not in (${DEFAULT_MIGRATION_TABLE}, ${DEFAULT_MIGRATION_LOCK_TABLE})
    order by c.relname, a.attnum`.execute(owner)
  const checks = await checkedLiterals(owner)
  const triggers = await triggerFilledColumns(owner)
  const categories = await readCategories(app, rows)

  const tables: DatabaseTables = new Map()
  for (const row of rows) {
    const key = `${row.tableName}.${row.columnName}`
    const columns = tables.get(row.tableName) ?? new Map<string, DatabaseColumn>()
    columns.set(row.columnName, {
      type: row.type,
      category: categories.get(row.type)!,
      nullable: row.nullable,
      literals: row.elementType === null && row.labels ? [...row.labels].sort() : (checks.get(key) ?? null),
      filledBy: row.filledBy ?? triggers.get(key) ?? null,
    })
    tables.set(row.tableName, columns)
  }
  return tables
}

/** `table.column` -> the sorted values a one-column CHECK (`col in (...)`, `col = any (array[...])`) allows. */
async function checkedLiterals(owner: Kysely<any>): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ tableName: string; columnName: string; definition: string }>`
    select c.relname as table_name, a.attname as column_name, pg_get_constraintdef(k.oid) as definition
    from pg_constraint k
    join pg_class c on c.oid = k.conrelid
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum = k.conkey[1]
    where k.contype = 'c' and cardinality(k.conkey) = 1 and n.nspname = current_schema()`.execute(owner)
  const literals = new Map<string, string[]>()
  for (const row of rows) {
    // PostgreSQL prints both spellings as `(col)::text = ANY ((ARRAY['A'::character varying, ...])::text[])`.
    const list = /= ANY \(+ARRAY\[(.*)\]/.exec(row.definition)?.[1]
    if (!list) continue
    const values = [...list.matchAll(/'((?:[^']|'')*)'/g)].map((match) => match[1]!.replaceAll("''", "'"))
    literals.set(`${row.tableName}.${row.columnName}`, values.sort())
  }
  return literals
}

/**
 * `table.column` -> the trigger function that assigns it (`new.col := ...`) before each inserted row, as
 * svc_fill_login_key fills login_key: an insert may leave such a column out though it has no default.
 */
async function triggerFilledColumns(owner: Kysely<any>): Promise<Map<string, string>> {
  // tgtype bits: 1 row-level, 2 before, 4 insert.
  const { rows } = await sql<{ tableName: string; functionName: string; source: string }>`
    select c.relname as table_name, p.proname as function_name, p.prosrc as source
    from pg_trigger g
    join pg_class c on c.oid = g.tgrelid
    join pg_namespace n on n.oid = c.relnamespace
    join pg_proc p on p.oid = g.tgfoid
    where not g.tgisinternal and n.nspname = current_schema() and (g.tgtype::int & 7) = 7`.execute(owner)
  const filled = new Map<string, string>()
  for (const row of rows) {
    for (const match of row.source.matchAll(/\bnew\.(\w+)\s*:=/gi)) {
      filled.set(`${row.tableName}.${match[1]!.toLowerCase()}`, `the trigger function ${row.functionName}`)
    }
  }
  return filled
}

/**
 * Asks the app's own connection what each column type becomes (node-postgres parses int8 as a string unless told
 * otherwise; db/database.ts tells it to make a number): one value of each type, cast from text, read back.
 */
async function readCategories(app: Kysely<any>, rows: ColumnRow[]): Promise<Map<string, Category>> {
  const categories = new Map<string, Category>()
  const asked: { type: string; value: ReturnType<typeof sql> }[] = []
  for (const row of rows) {
    if (categories.has(row.type) || asked.some((entry) => entry.type === row.type)) continue
    const sample = row.labels?.[0] ?? SAMPLES[row.scalarName]
    if (sample === undefined) {
      categories.set(row.type, `${row.type}, which test/db/database-columns.ts has no sample value of`)
      continue
    }
    const scalar = sql`cast(cast(${sample} as text) as ${sql.raw(row.elementType ?? row.type)})`
    asked.push({ type: row.type, value: row.elementType === null ? scalar : sql`cast(array[${scalar}] as ${sql.raw(row.type)})` })
  }
  if (asked.length === 0) return categories
  const { rows: answers } = await sql<Record<string, unknown>>`select ${sql.join(
    asked.map((entry, index) => sql`${entry.value} as ${sql.ref(`c${index}`)}`),
  )}`.execute(app)
  asked.forEach((entry, index) => categories.set(entry.type, valueCategory(answers[0]![`c${index}`])))
  return categories
}

function valueCategory(value: unknown): Category {
  if (Array.isArray(value)) return `${value.length > 0 ? valueCategory(value[0]) : 'unknown'}[]`
  if (value instanceof Date) return 'Date'
  if (Buffer.isBuffer(value)) return 'Buffer'
  if (value === null || typeof value === 'object') return 'json'
  return typeof value
}
