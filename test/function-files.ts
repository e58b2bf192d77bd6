import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { sql, type Kysely } from 'kysely'

/** db/functions: one file per SQL function, named after it. */
export const FUNCTIONS_DIR = new URL('../db/functions/', import.meta.url)

export function functionFiles(): Array<{ name: string; text: string }> {
  return readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ name: file.slice(0, -'.sql'.length), text: readFileSync(new URL(file, FUNCTIONS_DIR), 'utf8') }))
}

/** A function as PostgreSQL prints it: its whole `create or replace` statement, and who may execute it. */
export interface FunctionDefinition {
  name: string
  definition: string
  acl: string | null
}

// The body is stored verbatim, so a file may indent it differently from the migration that created it; a blank or
// re-indented line changes nothing that runs.
function normalised(definition: string): string {
  return definition
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join('\n')
}

async function definitionsIn(db: Kysely<any>, schema: string): Promise<FunctionDefinition[]> {
  const { rows } = await sql<FunctionDefinition>`
    select p.proname as name, pg_get_functiondef(p.oid) as definition, p.proacl::text as acl
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = ${schema} and starts_with(p.proname, 'svc_')
    order by p.proname collate "C"`.execute(db)
  return rows.map((row) => ({ ...row, definition: normalised(row.definition) }))
}

/** Every svc_ function the migrations left in schema public. */
export function databaseFunctions(owner: Kysely<any>): Promise<FunctionDefinition[]> {
  return definitionsIn(owner, 'public')
}

class Discarded extends Error {}

/**
 * What a file defines, as PostgreSQL prints it: the file runs in a scratch schema searched before public (so its
 * `create` and `grant` land there and its body still resolves public's tables), inside a transaction that is
 * rolled back. The scratch schema's name is printed as public's, so the result compares with databaseFunctions.
 */
export async function fileFunctions(owner: Kysely<any>, text: string): Promise<FunctionDefinition[]> {
  const scratch = `svc_function_file_${randomBytes(4).toString('hex')}`
  let loaded: FunctionDefinition[] = []
  try {
    await owner.transaction().execute(async (trx) => {
      await sql`create schema ${sql.id(scratch)}`.execute(trx)
      await sql`select set_config('search_path', ${`${scratch}, public`}, true)`.execute(trx)
      for (const statement of sqlStatements(text)) await sql.raw(statement).execute(trx)
      loaded = (await definitionsIn(trx, scratch)).map((found) => ({
        ...found,
        definition: found.definition.replace(`FUNCTION ${scratch}.`, 'FUNCTION public.'),
      }))
      throw new Discarded()
    })
  } catch (error) {
    if (!(error instanceof Discarded)) throw error
  }
  return loaded
}

/**
 * A file's statements, split at semicolons outside quotes, dollar quotes and `--` comments (comments dropped), since
 * an extended-protocol query (the embedded store's only kind) takes one statement.
 */
export function sqlStatements(text: string): string[] {
  const dollarQuote = /\$[A-Za-z_]*\$/y
  const statements: string[] = []
  let current = ''
  let at = 0
  const take = (end: number) => {
    current += text.slice(at, end)
    at = end
  }
  while (at < text.length) {
    dollarQuote.lastIndex = at
    const tag = dollarQuote.exec(text)?.[0]
    const char = text[at]!
    if (tag) {
      const close = text.indexOf(tag, at + tag.length)
      take(close < 0 ? text.length : close + tag.length)
    } else if (char === "'" || char === '"') {
      const close = text.indexOf(char, at + 1)
      take(close < 0 ? text.length : close + 1)
    } else if (text.startsWith('--', at)) {
      const close = text.indexOf('\n', at)
      at = close < 0 ? text.length : close
    } else if (char === ';') {
      statements.push(current)
      current = ''
      at += 1
    } else {
      take(at + 1)
    }
  }
  statements.push(current)
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== '')
}
