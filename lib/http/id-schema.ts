import { Type } from '@sinclair/typebox'

/**
 * An integer id in a path or a query string (docs/api.md#conventions): canonical decimal digits only. Path and query
 * validation coerces text to numbers, and that coercion reads `0x10`, `+1`, `01` and `1e3` as numbers, so the text
 * is checked first (the `string` branch, before any coercion) and only then coerced and bounded (the `integer`
 * branch); handlers receive a number. Ids are bigint in the database; past 2^53 they could not be represented exactly.
 */
export const PathIdSchema = Type.Unsafe<number>({
  allOf: [
    { type: 'string', pattern: '^[1-9][0-9]{0,15}$' },
    { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  ],
  description: 'a positive integer id in decimal digits',
})
