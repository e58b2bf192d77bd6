import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely'
import type { DB } from '../schema.js'

// A string no caller can pass as a value: NUL is refused by PostgreSQL text and by every request schema.
const MARKER = '\u0000svc-param:'

type Slot<Params> = { param: keyof Params } | { value: unknown }

/**
 * A query Kysely builds and compiles once; every later run only binds new values. On the hottest paths (every
 * authenticated request's first statement, GET /v1/me) building the operation tree, passing it through the plugins
 * and compiling it cost more CPU than the rest of the query's work in Node. The SQL text never changes, only
 * the values, so the compiled text is kept and each run binds the values in the compiled order.
 *
 * `build` receives `params`, whose every property is a placeholder standing for that run-time value; anything
 * else it passes stays a constant of the query. Use it only for queries whose shape does not depend on their values.
 * Each run hands Kysely a copy of the compiled statement with its values; the copy keeps the statement's root node,
 * and with it the flags set on the query (statement-flags.ts).
 */
export function precompiled<Params extends object, Row>(
  build: (db: Kysely<DB>, params: Params) => Compilable<Row> | RawBuilder<Row>,
): (db: Kysely<DB>, params: Params) => Promise<Row[]> {
  let compiled: { query: CompiledQuery<Row>; slots: Slot<Params>[] } | undefined

  const compile = (db: Kysely<DB>) => {
    const placeholders = new Proxy({}, { get: (_target, name) => `${MARKER}${String(name)}` }) as Params
    const built = build(db, placeholders)
    // A raw `sql` query compiles against an executor; a query builder carries its own.
    const query = 'isRawBuilder' in built ? built.compile(db) : built.compile()
    const slots = query.parameters.map((value): Slot<Params> =>
      typeof value === 'string' && value.startsWith(MARKER) ? { param: value.slice(MARKER.length) as keyof Params } : { value },
    )
    return { query, slots }
  }

  return async (db, params) => {
    compiled ??= compile(db)
    const parameters = compiled.slots.map((slot) => ('param' in slot ? params[slot.param] : slot.value))
    const { rows } = await db.executeQuery<Row>({ ...compiled.query, parameters })
    return rows
  }
}
