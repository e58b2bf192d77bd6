/**
 * Paths under these prefixes never read an access token (docs/api.md#presenting-the-access-token): plugins/platform/access.ts
 * refuses to start with a route there whose access asks for one, so a stale or foreign token can never stop a
 * login, a registration, a refresh or a password recovery.
 */
export const AUTH_SKIP_PREFIXES = ['/v1/login', '/v1/register', '/v1/refresh', '/v1/password', '/v1/oauth2', '/actuator'] as const

/** True when the path (query string ignored) is one of the prefixes or below it, segment-wise. */
export function isAuthSkipped(url: string): boolean {
  const path = url.split('?', 1)[0] ?? ''
  return AUTH_SKIP_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))
}
