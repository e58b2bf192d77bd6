import { Type, type Static, type TSchema } from '@sinclair/typebox'

// Response schemas become fast-json-stringify serialisers. A union (`anyOf`) there is chosen value by value by
// running an Ajv validator per branch: a history page ran over a hundred validations per response. A type list
// (OpenAPI 3.1) or a string enum is serialised with a plain typeof check instead.

/** Annotations a schema may carry: `$id` names it in the OpenAPI document (`#/components/schemas/<$id>`). */
export interface SchemaNotes {
  $id?: string
  description?: string
  examples?: unknown[]
}

/** `T | null` as one type list: `{ type: ['string', 'null'], ... }`. */
export function Nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })
}

/** One of fixed strings, as `{ type: 'string', enum: [...] }` rather than a union of literals. */
export function StringEnum<const Values extends readonly string[]>(values: Values, options: SchemaNotes = {}) {
  return Type.Unsafe<Values[number]>({ ...options, type: 'string', enum: [...values] })
}

/** One of fixed strings or null, still one type list (`enum` must list null for a validator to accept it). */
export function NullableStringEnum<const Values extends readonly string[]>(values: Values, options: SchemaNotes = {}) {
  return Type.Unsafe<Values[number] | null>({ ...options, type: ['string', 'null'], enum: [...values, null] })
}
