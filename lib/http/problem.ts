import type { FastifyError, FastifyReply } from 'fastify'
import { isDatabaseUnavailable, requestScopeRefusal } from '../db-errors.js'
import { AppError, problemType, type ErrorCode, type FieldError } from '../errors.js'
import type { Problem } from './problem-schema.js'

// Fastify's own client errors, mapped onto the catalog.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'VALIDATION_FAILED',
  FST_ERR_CTP_INVALID_JSON_BODY: 'VALIDATION_FAILED',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_VALIDATION: 'VALIDATION_FAILED',
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
}

function fieldErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext ?? 'body'
  return (error.validation ?? []).map((issue) => {
    const params = issue.params as Record<string, unknown>
    const property = params.missingProperty ?? params.additionalProperty
    const path = issue.instancePath.replace(/^\//, '').replaceAll('/', '.')
    const field = [context, path, typeof property === 'string' ? property : ''].filter(Boolean).join('.')
    const message =
      typeof params.additionalProperty === 'string' ? 'is not an allowed property' : (issue.message ?? 'is invalid')
    return { field, message }
  })
}

function isPostgresDataException(error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && 'severity' in (error as object)
}

export function toAppError(error: FastifyError): AppError {
  if (error instanceof AppError) return error
  if (error.validation) {
    const errors = fieldErrors(error)
    const summary = errors.map((entry) => `${entry.field} ${entry.message}`).join('; ')
    return new AppError('VALIDATION_FAILED', summary, { errors })
  }
  // The request scope refused the access token (db/tenant.ts); the transaction never ran a statement.
  const refusal = requestScopeRefusal(error)
  if (refusal) return new AppError(refusal)
  // SQLSTATE class 22 (data exception: a NUL byte, a value too long for its column, a number out of range) is
  // bad input the schemas let through; the transaction has rolled back, so the client gets a 400, not a 500.
  if (isPostgresDataException(error)) return new AppError('VALIDATION_FAILED', 'A value in the request is not acceptable.')
  // Unreachable, timed out or shutting down: nothing was committed, and the same request may be sent again.
  if (isDatabaseUnavailable(error)) return serviceUnavailable('The database is not answering; try again shortly.')
  const status = error.statusCode ?? 500
  const code = FASTIFY_CODES[error.code] ?? (status >= 400 && status < 500 ? STATUS_CODES[status] : undefined)
  if (!code) return new AppError('INTERNAL_ERROR')
  // JSON.parse messages name the offending position, which helps a client and reveals nothing internal.
  const detail = error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? `Malformed JSON body: ${error.message}` : undefined
  return new AppError(code, detail)
}

/** How long a client should wait before retrying a 503 (seconds). */
export const RETRY_AFTER_SECONDS = 1

export function serviceUnavailable(detail?: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', detail, { headers: { 'retry-after': String(RETRY_AFTER_SECONDS) } })
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

/** The body of a problem answer; `requestId` (the X-Request-Id of the answer) ties a report to the log lines. */
export function problemBody(error: AppError, requestId?: string): Problem {
  return {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
    ...(requestId ? { requestId } : {}),
  }
}

export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.extra.headers) reply.headers(error.extra.headers)
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(error, reply.request.id))
}
