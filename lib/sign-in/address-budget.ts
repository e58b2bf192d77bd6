import { isIPv6 } from 'node:net'
import { AppError, type ErrorCode } from '../errors.js'
import { ipv6Groups } from '../net/ipv6-groups.js'

/**
 * The per-address budget shared by login, registration and refresh (SVC_LOGIN_IP_PER_MINUTE), counted in
 * PostgreSQL so every instance shares it. The rate-limit plugin counts it before a route runs; refresh counts it
 * inside its one rotation statement instead (lib/sign-in/refresh.ts).
 */
export interface AddressBudget {
  /** The counter's key for the client's address. */
  key: string
  /** Requests allowed per window. */
  limit: number
}

export const addressBudget = (ip: string, limit: number): AddressBudget => ({ key: `auth:${budgetAddress(ip)}`, limit })

/**
 * Whose budget an address spends. An IPv6 subscriber is routed a whole /64 and may use any of its 2^64 addresses,
 * so per address an IPv6 client would have no budget at all: its key is the /64 (the first four groups, written
 * in full). An IPv4 address arriving mapped into IPv6 (`::ffff:a.b.c.d` on a dual-stack socket) is that IPv4
 * address, one client, as it is when it arrives unmapped.
 */
export function budgetAddress(ip: string): string {
  if (!isIPv6(ip)) return ip
  const groups = ipv6Groups(ip)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}

/** The answer beyond the budget, with Retry-After until the window resets. */
export function overBudget(code: Extract<ErrorCode, 'AUTH_018' | 'RATE_LIMITED'>, resetsAt: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - Date.now()) / 1000))
  return new AppError(code, 'Too many requests from this address; try again later.', {
    headers: { 'retry-after': String(retryAfter) },
  })
}
