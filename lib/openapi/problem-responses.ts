import { STATUS_CODES } from 'node:http'
import { AppError, ERROR_CATALOG, type ErrorCode } from '../errors.js'
import { problemBody } from '../http/problem.js'
import { PROBLEM_SCHEMA_ID } from '../http/problem-schema.js'
import { sharedHeader } from './response-headers.js'

export const PROBLEM_MEDIA_TYPE = 'application/problem+json'

// Written as a reference: @fastify/swagger does not look for named schemas inside `content`. The component itself
// is registered by plugins/platform/swagger.ts.
const PROBLEM_REFERENCE = { $ref: `#/components/schemas/${PROBLEM_SCHEMA_ID}` }

// The refusals that say when to come back: the address budget and the login lockout (lib/sign-in), the daily SMS
// quota (lib/sms/create-message.ts), the one-time code limits (lib/account-security/codes) and 503 (lib/http/problem.ts
// `serviceUnavailable`).
const SENDS_RETRY_AFTER = new Set<ErrorCode>(['AUTH_018', 'RATE_LIMITED', 'OTP_RATE_LIMITED', 'SMS_QUOTA_EXCEEDED', 'SERVICE_UNAVAILABLE'])

const EXAMPLE_REQUEST_ID = '0b5f6c1e-7d2a-4f43-9a51-2c8e0f9d3b17'

/** The catalog's HTTP status of each code. */
export const catalogStatusOf = (code: ErrorCode): number => ERROR_CATALOG[code][0]

/**
 * One response per HTTP status among `codes` (each code at `statusOf` it: the catalog's, unless the route names
 * another): the Problem body with `code` narrowed to the codes of that status (a
 * generated client gets their union as the error type), and each code's own body, rendered by the service's
 * renderer with its default detail, as a named example.
 */
export function problemResponses(codes: readonly ErrorCode[], statusOf: (code: ErrorCode) => number = catalogStatusOf): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code])

  const responses: Record<string, unknown> = {}
  for (const [status, ofStatus] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retryAfter = ofStatus.every((code) => SENDS_RETRY_AFTER.has(code))
    responses[String(status)] = {
      description: `${STATUS_CODES[status]}: ${ofStatus.join(', ')}`,
      headers: { ...sharedHeader('X-Request-Id'), ...(retryAfter ? sharedHeader('Retry-After') : {}) },
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: {
            allOf: [PROBLEM_REFERENCE, { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: ofStatus } } }],
          },
          examples: Object.fromEntries(
            ofStatus.map((code) => [
              code,
              { summary: ERROR_CATALOG[code][1], value: { ...problemBody(new AppError(code), EXAMPLE_REQUEST_ID), status } },
            ]),
          ),
        },
      },
    }
  }
  return responses
}
