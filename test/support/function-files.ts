import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { sqlStatements } from '../../db/sql-statements.js'

export { functionFiles } from '../../db/function-files.js'

/** A function as PostgreSQL prints it: its whole `create or replace` statement, and who may execute it. */
export interface FunctionDefinition {
  name: string
  definition: string
  acl: string | null
}

// The body is stored verbatim, so a database migrated before the functions moved to their files may indent it
// differently; a blank or re-indented line changes nothing that runs.
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

/** Every svc_ function the migrator left in schema public. */
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
