/** What an API key may be given; each route that admits keys names exactly one (its `access`, lib/http/access.ts). */
export const API_KEY_SCOPES = ['sms:send', 'sms:read', 'templates:write', 'opt-outs:write', 'usage:read'] as const

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && (API_KEY_SCOPES as readonly string[]).includes(value)
}
