import { AppError } from '../errors.js'

/**
 * How deep a JSON body may nest. No body this service takes goes past a few levels; a deeper one only costs stack:
 * every walk of a parsed body (schema validation, the well-formed text pass) recurses once per level, and ten
 * thousand levels overflow it.
 */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const OPEN_BRACE = 0x7b
const CLOSE_BRACKET = 0x5d
const CLOSE_BRACE = 0x7d

/**
 * Whether the JSON text nests arrays and objects deeper than `max`, read in one pass over the raw bytes before any
 * parser or recursive walk sees them. Brackets inside strings do not count; a backslash escapes the next byte, so
 * `"\""` stays one string. Multi-byte UTF-8 never contains these ASCII bytes, so bytes are read as they come. Text
 * that is not valid JSON may be counted oddly; the parser refuses it next anyway.
 */
export function nestsDeeperThan(body: Buffer, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) inString = true
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > max) return true
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth--
  }
  return false
}

/** The refusal of a body nested too deep, answered before any handler runs. */
export const tooDeep = (): AppError =>
  new AppError('VALIDATION_FAILED', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`)
