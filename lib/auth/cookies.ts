import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply } from 'fastify'
import type { Env } from '../env.js'
import type { TokenPair } from './tokens.js'

export const ACCESS_COOKIE = 'svc_access_token'
export const REFRESH_COOKIE = 'svc_refresh_token'

function attributes(env: Env, maxAge: number): CookieSerializeOptions {
  return {
    path: '/',
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
