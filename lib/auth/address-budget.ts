import { AppError, type ErrorCode } from '../errors.js'

/**
 * The per-address budget shared by login, registration and refresh (SVC_LOGIN_IP_PER_MINUTE), counted in
 * PostgreSQL so every instance shares it. The rate-limit plugin counts it before a route runs; refresh counts it
 * inside its one rotation statement instead (lib/auth/refresh.ts).
 */
export interface AddressBudget {
  /** The counter's key for the client's address. */
  key: string
  /** Requests allowed per window. */
  limit: number
}

export const addressBudget = (ip: string, limit: number): AddressBudget => ({ key: `auth:${ip}`, limit })

/** The answer beyond the budget, with Retry-After until the window resets. */
export function overBudget(code: Extract<ErrorCode, 'AUTH_018' | 'RATE_LIMITED'>, resetsAt: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - Date.now()) / 1000))
  return new AppError(code, 'Too many requests from this address; try again later.', {
    headers: { 'retry-after': String(retryAfter) },
  })
}
