import { ACCESS_COOKIE, REFRESH_COOKIE } from '../sign-in/cookies.js'
import { MFA_COOKIE } from '../account-security/second-factor/mfa-token.js'

/** Response headers every operation shares, documented once under `components.headers` and referenced by name. */
export const SHARED_RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: "This request's id (the caller's own X-Request-Id when acceptable); problem bodies repeat it as requestId",
    required: true,
    schema: { type: 'string', examples: ['0b5f6c1e-7d2a-4f43-9a51-2c8e0f9d3b17'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    required: true,
    schema: { type: 'integer', minimum: 1, examples: [60] },
  },
  'Idempotent-Replayed': {
    description: 'Present when this answer replays the request first made with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
} as const

export type SharedHeaderName = keyof typeof SHARED_RESPONSE_HEADERS

// @fastify/swagger turns each response header it is given into `{ description, schema }`; the shared ones are then
// replaced by references to their components (lib/openapi/finish-document.ts), so only the name matters here.
export const sharedHeader = (name: SharedHeaderName) => ({ [name]: SHARED_RESPONSE_HEADERS[name].schema })

const TOKEN_COOKIES =
  `Two cookies, ${ACCESS_COOKIE} and ${REFRESH_COOKIE} (HttpOnly, Secure unless SVC_COOKIE_SECURE=false, ` +
  'SameSite from SVC_COOKIE_SAMESITE, Max-Age the token lifetime); the tokens travel in no response body'

/** What a route's answer does with cookies (`setsCookies` in its schema). */
export type CookieEffect = 'tokens' | 'cleared' | 'tokens-or-mfa' | 'tokens-mfa-cleared'

const COOKIE_EFFECTS: Record<CookieEffect, string> = {
  tokens: TOKEN_COOKIES,
  cleared: `${ACCESS_COOKIE} and ${REFRESH_COOKIE} cleared (empty, Max-Age=0)`,
  'tokens-or-mfa':
    `${TOKEN_COOKIES}. For a user with a second factor (mfaRequired) instead only ${MFA_COOKIE} (HttpOnly, Secure and ` +
    'SameSite as the others, Path=/v1/login, Max-Age=expiresIn), for the second step',
  'tokens-mfa-cleared': `${TOKEN_COOKIES}; ${MFA_COOKIE} cleared (Max-Age=0), since it is used up`,
}

export const tokenCookiesHeader = (cookies: CookieEffect) => ({
  'Set-Cookie': { type: 'string', description: COOKIE_EFFECTS[cookies] },
})
