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
