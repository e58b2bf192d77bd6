import pg from 'pg'

/** How many distinct statements one connection keeps prepared; later new texts run unnamed (still correct). */
export const MAX_PREPARED_PER_CONNECTION = 256

/**
 * A pg client that prepares each parameterised statement once per connection and then only binds and executes
 * it. Kysely sends unnamed statements, so PostgreSQL would parse, analyse and plan the same SQL on every request;
 * on the hot paths (GET /v1/me, history) that was a large part of the database's CPU per request.
 *
 * The cache is keyed by the exact SQL text, so a name can never stand for two statements, and it is bounded: query
 * texts that vary with input (IN lists of any length) cannot grow it without limit. Statements without parameters
 * (begin, commit, DDL in migrations) keep the simple protocol.
 */
export class StatementCachingClient extends pg.Client {
  readonly #names = new Map<string, string>()

  // pg's query() has many overloads; only the (text, values[, callback]) form Kysely uses is intercepted.
  override query(...args: unknown[]): never {
    const [text, values] = args
    if (typeof text === 'string' && Array.isArray(values) && values.length > 0) {
      const name = this.#nameFor(text)
      if (name) args = [{ name, text, values }, ...args.slice(2)]
    }
    return (super.query as (...forwarded: unknown[]) => never)(...args)
  }

  #nameFor(text: string): string | undefined {
    let name = this.#names.get(text)
    if (name === undefined && this.#names.size < MAX_PREPARED_PER_CONNECTION) {
      name = `svc_${this.#names.size}`
      this.#names.set(text, name)
    }
    return name
  }
}
