/** A variable of a Kakao template's content: `#{name}` (docs/provider.md#kakao-reads). */
const VARIABLE = /#\{([^{}]+)\}/g

/** The names inside `#{...}` in `content`, each once, in order of first use. */
export function templateVariables(content: string): string[] {
  return [...new Set(Array.from(content.matchAll(VARIABLE), (match) => match[1]!))]
}

/**
 * `content` with each `#{name}` replaced by its value, in one pass: a value is inserted as written and never scanned
 * again, and a name without a value stays as written. Acceptance sizes the text and the hand-over sends it with this
 * one function, since the provider refuses a notice whose text is not its template so filled. Own values only: a
 * variable named `constructor` has no value unless one is given.
 */
export function renderAlimtalk(content: string, values: Readonly<Record<string, string>>): string {
  return content.replace(VARIABLE, (match, name: string) => (Object.hasOwn(values, name) ? values[name]! : match))
}
