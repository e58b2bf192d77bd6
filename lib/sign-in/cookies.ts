import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply } from 'fastify'
import type { Env } from '../env.js'
import { MFA_COOKIE, type MfaToken } from '../account-security/second-factor/mfa-token.js'
import type { TokenPair } from './tokens.js'

export const ACCESS_COOKIE = 'svc_access_token'
export const REFRESH_COOKIE = 'svc_refresh_token'

/** The mfa cookie (lib/account-security/second-factor/mfa-token.ts) goes only to the login routes that take the second step. */
const MFA_COOKIE_PATH = '/v1/login'

function attributes(env: Env, maxAge: number, path = '/'): CookieSerializeOptions {
  return {
    path,
    httpOnly: true,
    secure: env.SVC_COOKIE_SECURE,
    sameSite: env.SVC_COOKIE_SAMESITE,
    maxAge,
    ...(env.SVC_COOKIE_DOMAIN ? { domain: env.SVC_COOKIE_DOMAIN } : {}),
  }
}

export function setAuthCookies(reply: FastifyReply, env: Env, tokens: TokenPair): void {
  reply.setCookie(ACCESS_COOKIE, tokens.access.token, attributes(env, env.SVC_ACCESS_TTL))
  reply.setCookie(REFRESH_COOKIE, tokens.refresh.token, attributes(env, env.SVC_REFRESH_TTL))
}

export function clearAuthCookies(reply: FastifyReply, env: Env): void {
  reply.setCookie(ACCESS_COOKIE, '', attributes(env, 0))
  reply.setCookie(REFRESH_COOKIE, '', attributes(env, 0))
}

/** The second step's token, as HttpOnly, Secure and SameSite as the session's cookies, for as long as it is good. */
export function setMfaCookie(reply: FastifyReply, env: Env, token: MfaToken, expiresIn: number): void {
  reply.setCookie(MFA_COOKIE, token.text, attributes(env, expiresIn, MFA_COOKIE_PATH))
}

export function clearMfaCookie(reply: FastifyReply, env: Env): void {
  reply.setCookie(MFA_COOKIE, '', attributes(env, 0, MFA_COOKIE_PATH))
}
