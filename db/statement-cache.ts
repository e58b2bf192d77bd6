import { sql } from 'kysely'

/**
 * The closing comment of a statement that must be planned for its own values every time, so it is never prepared:
 * PostgreSQL moves a prepared statement to a generic plan after five runs when that looks no dearer, and a generic
 * plan cannot see which tenant (of any size) or which filter it serves. Add it with `.modifyEnd(planPerExecution)`.
 */
export const PLANNED_PER_EXECUTION = '/* planned per execution */'
export const planPerExecution = sql.raw(PLANNED_PER_EXECUTION)

/** How many distinct statements one connection keeps prepared; later new texts run unnamed (still correct). */
export const MAX_PREPARED_PER_CONNECTION = 256

/**
 * Names for the parameterised statements of one connection, so each is prepared once and then only bound and
 * executed. Kysely sends unnamed statements, so PostgreSQL would parse and analyse the same SQL on every request.
 *
 * Keyed by the exact SQL text, so a name can never stand for two statements, and bounded: query texts that vary
 * with input (IN lists of any length) cannot grow it without limit.
 */
export class StatementNames {
  readonly #names = new Map<string, string>()

  /** The statement's name on this connection, or undefined once the connection holds its maximum. */
  nameFor(text: string): string | undefined {
    let name = this.#names.get(text)
    if (name === undefined && this.#names.size < MAX_PREPARED_PER_CONNECTION) {
      name = `svc_${this.#names.size}`
      this.#names.set(text, name)
    }
    return name
  }
}

/**
 * The closing comment of a statement the pg client may hold back and send in one write with the transaction's next
 * statement (db/pg-client.ts). Only for a statement whose result nobody reads and whose failure may surface on
 * that next statement: the request scope, which raises when the access token is revoked, and the tenant binding
 * of work outside requests (`setTenant`).
 */
export const SENT_WITH_NEXT = '/* sent with the next statement */'

/**
 * The closing comment of a read that ends its transaction: in a read-only transaction (`start transaction read
 * only`, every GET) the pg client writes the transaction's `commit` in the same batch as this statement, so the
 * request needs one round trip in all (db/pg-client.ts). Elsewhere the comment changes nothing. Nothing may run
 * in the transaction after it; its commit and rollback are then answered by the client. Add it with
 * `.modifyEnd(endsReadOnlyTransaction)` to a statement that is the last of every transaction it runs in.
 */
export const ENDS_READ_ONLY_TRANSACTION = '/* ends a read-only transaction */'
export const endsReadOnlyTransaction = sql.raw(ENDS_READ_ONLY_TRANSACTION)
