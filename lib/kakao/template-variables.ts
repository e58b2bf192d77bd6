/** A variable of a Kakao template's content: `#{name}` (docs/provider.md#kakao-reads). */
const VARIABLE = /#\{([^{}]+)\}/g

/** The names inside `#{...}` in `content`, each once, in order of first use. */
export function templateVariables(content: string): string[] {
  return [...new Set(Array.from(content.matchAll(VARIABLE), (match) => match[1]!))]
}
