import type { FastifyError, FastifyReply } from 'fastify'
import { catalogErrorFor } from '../catalog-errors.js'
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

export function toAppError(error: FastifyError): AppError {
  if (error.validation) {
    const errors = fieldErrors(error)
    const summary = errors.map((entry) => `${entry.field} ${entry.message}`).join('; ')
    return new AppError('VALIDATION_FAILED', summary, { errors })
  }
  const known = catalogErrorFor(error)
  if (known) return known
  const status = error.statusCode ?? 500
  const code = FASTIFY_CODES[error.code] ?? (status >= 400 && status < 500 ? STATUS_CODES[status] : undefined)
  if (!code) return new AppError('INTERNAL_ERROR')
  // JSON.parse messages name the offending position, which helps a client and reveals nothing internal.
  const detail = error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? `Malformed JSON body: ${error.message}` : undefined
  return new AppError(code, detail)
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
