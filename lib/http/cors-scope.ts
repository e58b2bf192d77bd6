/**
 * Listed origins get CORS on every `/v1` route (docs/api.md#cors). Everything else (actuator probes, /metrics,
 * /internal operations calls, /docs) is for operators and servers, never for a browser page on another origin.
 */
export const CORS_PATH_PREFIX = '/v1'

/** True when the path (query string ignored) is the prefix or below it, segment-wise (`/v1x` is not). */
export function isCorsPath(url: string): boolean {
  const path = url.split('?', 1)[0] ?? ''
  return path === CORS_PATH_PREFIX || path.startsWith(`${CORS_PATH_PREFIX}/`)
}
