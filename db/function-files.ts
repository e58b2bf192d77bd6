import { readdirSync, readFileSync } from 'node:fs'
import { sql, type Kysely } from 'kysely'
import { sqlStatements } from './sql-statements.js'

/**
 * db/functions holds the one definition of every SQL function (`svc_*`): one file per function, its
 * `create or replace function` and its grants. Functions are not history, so the versioned migrations do not copy
 * them: the migrator applies every file after the migrations (Flyway's "repeatable migrations"), and a database
 * runs exactly the definitions of the code that migrated it, from whatever point it was upgraded.
 * The build copies the folder next to this module (scripts/ensure-build.mjs).
 */
const FUNCTIONS_DIR = new URL('./functions/', import.meta.url)

export interface FunctionFile {
  /** The function's name, which is the file's name. */
  name: string
  text: string
}

export function functionFiles(): FunctionFile[] {
  return readdirSync(FUNCTIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ name: file.slice(0, -'.sql'.length), text: readFileSync(new URL(file, FUNCTIONS_DIR), 'utf8') }))
}

async function runFile(db: Kysely<any>, file: FunctionFile): Promise<void> {
  try {
    for (const statement of sqlStatements(file.text)) await sql.raw(statement).execute(db)
  } catch (error) {
    throw new Error(`db/functions/${file.name}.sql failed: ${String(error)}`, { cause: error })
  }
}

/**
 * Defines one function now, from its file: for a migration that needs it at its point in history (a trigger's
 * function, the helper that protects each new tenant table). The migrator applies the file again at the end.
 */
export async function defineFunction(db: Kysely<any>, name: string): Promise<void> {
  await runFile(db, { name, text: readFileSync(new URL(`${name}.sql`, FUNCTIONS_DIR), 'utf8') })
}

export interface AppliedFunctions {
  /** Functions (schema public, `svc_` prefix) that no file defines any more, dropped: an old signature, a removed function. */
  dropped: string[]
}

// Taken for the transaction, so two instances migrating at start never replace the same function at once.
const APPLY_LOCK = 0x5356_4346

/**
 * Applies every file in one transaction, then drops each `svc_` function of schema public that no file defined in
 * it: `create or replace` writes a function's catalog row even when nothing changed, so every function a file
 * defines carries this transaction's id, and any other one is left over (a changed signature creates a new function
 * beside the old). A drop refuses, failing the migration, when something still depends on the old function.
 */
export async function applyFunctionFiles(db: Kysely<any>): Promise<AppliedFunctions> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${APPLY_LOCK})`.execute(trx)
    for (const file of functionFiles()) await runFile(trx, file)
    const { rows } = await sql<{ signature: string }>`
      select p.oid::regprocedure::text as signature
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and starts_with(p.proname, 'svc_') and p.xmin <> pg_current_xact_id()::xid
      order by 1`.execute(trx)
    for (const { signature } of rows) await sql`drop function ${sql.raw(signature)}`.execute(trx)
    return { dropped: rows.map((row) => row.signature) }
  })
}
