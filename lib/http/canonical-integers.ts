/**
 * Integers in paths, query strings and headers arrive as text and are coerced by Ajv, which reads `0x10`, `1e1`,
 * `+1`, ` 1` and `01` as numbers too: `?page=0x1` would be page 1. Every integer there must be canonical decimal
 * (docs/api.md#conventions), so the coercing validator gets each `integer` schema with the text checked first (a
 * `string` branch, before any coercion) and only then coerced and bounded, as lib/http/id-schema.ts does for ids.
 * Done to the schema handed to the validator, not to the route's: the OpenAPI document keeps saying `integer`.
 */

const CANONICAL_DECIMAL = { type: 'string', pattern: '^(0|-?[1-9][0-9]*)$' } as const

// Keywords whose values are data, not schemas: an example that happens to say `type: 'integer'` is left as it is.
const DATA_KEYWORDS = new Set(['default', 'examples', 'example', 'const', 'enum'])

export function withCanonicalIntegers<T>(schema: T): T {
  return rewrite(schema) as T
}

function rewrite(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewrite)
  if (typeof node !== 'object' || node === null) return node
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) copy[key] = DATA_KEYWORDS.has(key) ? value : rewrite(value)
  if (copy.type !== 'integer') return copy
  // `default` stays outside the allOf: Ajv fills in a missing property only from the property's own schema.
  const { default: fallback, ...integer } = copy
  return { ...(fallback === undefined ? {} : { default: fallback }), allOf: [CANONICAL_DECIMAL, integer] }
}
