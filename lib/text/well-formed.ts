/**
 * One normalisation for every stored or echoed text of the SMS and template bodies: a lone UTF-16 surrogate cannot
 * be encoded as UTF-8, so PostgreSQL would store it as U+FFFD while an answer built from the request echoed it raw.
 * Replacing it before anything reads the body makes the answer, the row and the provider's text agree.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD')
}

/** Every string in a JSON value (object keys included), in place for containers; returns the normalised value. */
export function wellFormedJson(value: unknown): unknown {
  if (typeof value === 'string') return wellFormedText(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormedJson(value[i])
    return value
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record)) {
      const clean = wellFormedText(key)
      const inner = wellFormedJson(record[key])
      if (clean !== key) delete record[key]
      record[clean] = inner
    }
  }
  return value
}
