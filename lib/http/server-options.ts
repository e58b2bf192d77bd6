import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import type { ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js'
import { AppError } from '../errors.js'
import type { Env } from '../env.js'
import { sendProblem } from './problem.js'

/** Log paths that may carry secrets, tokens or personal data; pino replaces them before anything is written. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature"]',
  'req.headers["x-provider-secret"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.temporaryPassword',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.phone',
  '*.senderNumber',
]

// Bodies are validated strictly (a number is not a string); path, query and headers arrive as text and are coerced.
function schemaController(): FastifyServerOptions['schemaController'] {
  const shared = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const
  return {
    compilersFactory: {
      // Fastify passes { schema, httpPart } at run time; the published factory type only knows Ajv's own shape.
      buildValidator: ((externalSchemas: Record<string, unknown> = {}) => {
        const strictAjv = addFormats.default(new Ajv.default({ ...shared, coerceTypes: false }))
        const coercingAjv = addFormats.default(new Ajv.default({ ...shared, coerceTypes: 'array' }))
        for (const schema of Object.values(externalSchemas)) {
          strictAjv.addSchema(schema as object)
          coercingAjv.addSchema(schema as object)
        }
        return ({ schema, httpPart }: FastifyRouteSchemaDef<object>) =>
          (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema)
      }) as unknown as ValidatorFactory,
    },
  }
}

/** Fastify options shared by server.ts and the test helper, so tests exercise the production configuration. */
export function serverOptions(env: Env): FastifyServerOptions {
  return {
    logger:
      env.LOG_LEVEL === 'silent'
        ? false
        : { level: env.LOG_LEVEL, redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } },
    requestIdHeader: 'x-request-id',
    trustProxy: env.SVC_TRUST_PROXY,
    // 10,000 recipients with names and class names fit comfortably; anything larger is refused with 413.
    bodyLimit: 4 * 1024 * 1024,
    return503OnClosing: true,
    schemaController: schemaController(),
    // Router-level rejections (malformed URL, over-long path parameter) never reach the error handler; they are
    // rendered from the same catalog here.
    frameworkErrors: (error, _request, reply) => {
      const clientError = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      sendProblem(reply, clientError ? new AppError('VALIDATION_FAILED', error.message) : new AppError('INTERNAL_ERROR'))
    },
  }
}
