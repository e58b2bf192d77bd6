import { createHash } from 'node:crypto'

/** JSON with object keys sorted at every depth, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const fields = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
    return `{${fields.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * SHA-256 of method, route and canonical body. The route is its pattern plus the path parameters, so one key
 * sent to class 1 and then to class 2 is a different request, not a replay of the first.
 */
export function requestFingerprint(method: string, route: string, params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(`${method}\n${route}\n${canonicalJson(params ?? {})}\n${canonicalJson(body ?? null)}`)
    .digest('hex')
}
