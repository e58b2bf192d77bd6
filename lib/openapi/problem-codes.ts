import type { FastifyContextConfig, FastifySchema } from 'fastify'
import { ERROR_CATALOG, type ErrorCode } from '../errors.js'
import { policyOf } from '../http/access.js'
import { ERROR_CODES } from '../http/problem-schema.js'

/** What is read of a route: the options the plugins read when they decide which of their refusals apply to it. */
export interface DocumentedRoute {
  method: string | readonly string[]
  url: string
  config?: FastifyContextConfig
  schema?: FastifySchema
}

// Fastify parses a body for these methods (json-only and the body limits apply), and the CSRF check covers them.
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * The catalog codes an operation can answer, in catalog order. A plugin's refusals are derived from the same route
 * config that decides whether the plugin acts (`access`, `idempotency`, ...), so they cannot drift from what runs;
 * what the handler itself throws (directly or through lib/) is listed by the route in `schema.problems`.
 * The test helper checks every problem any test provokes against this list (test/support/documented-problems.ts).
 */
export function problemCodesOf(route: DocumentedRoute): ErrorCode[] {
  const config = route.config ?? {}
  const schema = route.schema ?? {}
  const writes = [route.method].flat().some((method) => WRITE_METHODS.has(method))
  const policy = policyOf(config)
  const codes = new Set<ErrorCode>([...(schema.problems ?? []), ...(Object.keys(schema.problemStatuses ?? {}) as ErrorCode[])])
  const add = (...more: ErrorCode[]) => more.forEach((code) => codes.add(code))

  // plugins/platform/problem.ts hides anything unexpected; the database may be unreachable, and closing answers 503 to all
  // but the probes, which report DOWN in their own body.
  add('INTERNAL_ERROR')
  if (!config.answersWhileClosing) add('SERVICE_UNAVAILABLE')
  // Schema failures, malformed JSON, and values PostgreSQL refuses (plugins/platform/problem.ts).
  if (writes || schema.body || schema.querystring || schema.params || schema.headers) add('VALIDATION_FAILED')
  if (writes) add('PAYLOAD_TOO_LARGE')
  // plugins/platform/json-only.ts refuses a declared Content-Encoding or charset on every request, with a body or not.
  add('UNSUPPORTED_MEDIA_TYPE')
  // The credential, the role check and the address budget of the route's access (lib/http/access.ts).
  add(...policy.problems)
  if (writes && policy.csrfCookie) add('CSRF_ORIGIN_REJECTED')
  if (config.idempotency) add('IDEMPOTENCY_KEY_MISSING', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS')

  return ERROR_CODES.filter((code) => codes.has(code))
}

/** The status the route answers `code` with: the catalog's, unless the route names another (`schema.problemStatuses`). */
export function problemStatusOf(route: Pick<DocumentedRoute, 'schema'>, code: ErrorCode): number {
  return route.schema?.problemStatuses?.[code] ?? ERROR_CATALOG[code][0]
}
