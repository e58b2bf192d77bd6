import { PathIdSchema } from '../http/id-schema.js'

interface ObjectSchema {
  properties?: Record<string, unknown>
  required?: string[]
}

/**
 * Path ids are validated as text first and only then as numbers (lib/http/id-schema.ts); written as that `allOf`,
 * a client generator would type the parameter `string & number`. What a client sends is a positive integer.
 */
const PathIdAsSent = {
  type: 'integer',
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'a positive integer id, in decimal digits without sign or leading zeros',
  examples: [1],
}

function mapProperties(schema: ObjectSchema, map: (property: unknown) => unknown): ObjectSchema {
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, value]) => [name, map(value)]))
  return { ...schema, properties }
}

export function documentedParams(params: unknown): unknown {
  return mapProperties(params as ObjectSchema, (property) => (property === PathIdSchema ? PathIdAsSent : property))
}

// Header schemas name headers as Node delivers them (lower case), which is what the validator compares with.
const canonicalHeaderName = (name: string) => name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase())

/** Headers as they are usually written (`Idempotency-Key`); the name's case means nothing to HTTP or to the server. */
export function documentedHeaders(headers: unknown): unknown {
  const schema = headers as ObjectSchema
  const properties = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, value]) => [canonicalHeaderName(name), value]))
  return { ...schema, properties, required: (schema.required ?? []).map(canonicalHeaderName) }
}

/** A union of string literals (`Type.Union` of `Type.Literal`, which the validator keeps) says what an enum says. */
function asEnum(property: unknown): unknown {
  const members = (property as { anyOf?: Array<{ const?: unknown }> }).anyOf
  if (!members?.every((member) => typeof member.const === 'string')) return property
  const { anyOf: _members, ...rest } = property as Record<string, unknown>
  return { ...rest, type: 'string', enum: members.map((member) => member.const) }
}

/**
 * Ajv fills a missing property that has a `default` before `required` is checked (useDefaults), so the server
 * never refuses its absence: such a query parameter is optional for the client (page, size, sort).
 */
export function documentedQuery(querystring: unknown): unknown {
  const schema = querystring as ObjectSchema
  const defaulted = (name: string) => (schema.properties?.[name] as { default?: unknown } | undefined)?.default !== undefined
  return { ...mapProperties(schema, asEnum), required: (schema.required ?? []).filter((name) => !defaulted(name)) }
}
