import { STATUS_CODES, type Server } from 'node:http'
import type { Socket } from 'node:net'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import type { ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifyHttpOptions, FastifyRequest, FastifyServerOptions } from 'fastify'
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js'
import { AppError } from '../errors.js'
import { DEFAULT_BODY_LIMIT } from './body-limits.js'
import { withCanonicalIntegers } from './canonical-integers.js'
import { trustProxySetting, type Env } from '../env.js'
import { PROBLEM_CONTENT_TYPE, problemBody, sendProblem } from './problem.js'
import { OperatorLogController } from './log-controller.js'
import { requestIdFor } from './request-id.js'
import { requestLogger } from './request-logger.js'
import { loggableUrl } from './log-url.js'

/**
 * Fastify's request serializer with the query string's search text and credentials left out (lib/http/log-url.ts):
 * redaction by path cannot reach inside the url string. Any object logged as `req` passes through it, so nothing of
 * it is assumed to be there.
 */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? loggableUrl(request.url) : undefined,
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

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
          coercingAjv.addSchema(withCanonicalIntegers(schema as object))
        }
        // The one place text is coerced to numbers: every integer there is held to canonical decimal first.
        return ({ schema, httpPart }: FastifyRouteSchemaDef<object>) =>
          httpPart === 'body' ? strictAjv.compile(schema) : coercingAjv.compile(withCanonicalIntegers(schema))
      }) as unknown as ValidatorFactory,
    },
  }
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers over the size limit, bytes that are not
 * HTTP, a request that took too long to arrive); its 'clientError' answer would be plain JSON outside the catalog.
 * Written here by hand, from the catalog, then the connection is closed: the parser's state cannot be trusted.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection, or one already gone, has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('REQUEST_HEADER_FIELDS_TOO_LARGE')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('REQUEST_TIMEOUT')
        : new AppError('VALIDATION_FAILED', 'The request is not valid HTTP/1.1.')
  if (socket.writable) {
    const body = JSON.stringify(problemBody(problem))
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/** Node's own limit on the headers alone; the request limit below never raises it. */
const NODE_HEADERS_TIMEOUT_MS = 60_000

/**
 * How long a client may take to send a whole request (SVC_HTTP_REQUEST_TIMEOUT_MS), as Node's HTTP server options.
 * Fastify turns Node's request limit off by default, so without this a client trickling a body one byte at a time
 * holds its connection for as long as it likes (a slowloris). Node looks for late requests every
 * `connectionsCheckingInterval`, so it is a quarter of the limit: one is ended at most a quarter late.
 */
export function requestTimeouts(limitMs: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout: limitMs,
    headersTimeout: Math.min(NODE_HEADERS_TIMEOUT_MS, limitMs),
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(limitMs / 4))),
  }
}

/** Trusts the nearest `hops` proxies, whatever their addresses (the socket peer is hop 0). */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops

/**
 * Readable logs for a developer at a terminal; JSON everywhere else (production, tests, a pipe to a collector).
 * pino resolves the transport by name only when it is asked for, so pino-pretty is loaded only in that case.
 */
export function prettyLogs(env: Env, stdoutIsTty = process.stdout.isTTY === true): boolean {
  return env.NODE_ENV === 'development' && stdoutIsTty
}

/** Fastify options shared by server.ts and the test helper, so tests exercise the production configuration. */
export function serverOptions(env: Env): FastifyHttpOptions<Server> {
  const trust = trustProxySetting(env.SVC_TRUST_PROXY)
  // loadEnv has refused anything else; an Env built by hand must not fall back to trusting every hop.
  if (!('trust' in trust)) throw new Error(trust.problem)
  return {
    logger:
      env.LOG_LEVEL === 'silent'
        ? false
        : {
            level: env.LOG_LEVEL,
            redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
            serializers: { req: serializeRequest },
            ...(prettyLogs(env) ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
          },
    // A request's logger is made when it first writes a line (lib/http/request-logger.ts).
    ...(env.LOG_LEVEL === 'silent' ? {} : { childLoggerFactory: requestLogger }),
    // The id is chosen (and an unacceptable incoming one replaced) in one place; plugins/platform/request-id.ts echoes it.
    requestIdHeader: false,
    genReqId: requestIdFor,
    logController: new OperatorLogController(),
    // A hop count or the proxies' addresses (proxy-addr): request.ip is then the right-most address that no trusted
    // proxy added, and every reader of the client address (rate limits, sessions) uses request.ip. This Fastify
    // treats a bare number as "trust nothing", so the hop count is given as proxy-addr's (address, hop) function.
    trustProxy: typeof trust.trust === 'number' ? trustHops(trust.trust) : trust.trust,
    // Loading every plugin (the routes' schemas compiled, the embedded store opened and migrated) took more than
    // Fastify's default 10 s on a slow, busy virtual machine, and the start failed with "Plugin did not start in
    // time"; a plugin that truly hangs still fails the start, a minute later.
    pluginTimeout: 60_000,
    // Routes that take recipient lists raise it (lib/http/body-limits.ts).
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Fastify copies its own requestTimeout onto the server after creating it; both must carry the limit.
    requestTimeout: env.SVC_HTTP_REQUEST_TIMEOUT_MS,
    // Node's own Host check answers an empty 400; plugins/platform/node-refusals.ts makes it instead, from the catalog.
    http: { ...requestTimeouts(env.SVC_HTTP_REQUEST_TIMEOUT_MS), requireHostHeader: false },
    // plugins/platform/closing.ts answers requests that arrive while closing, from the catalog.
    return503OnClosing: false,
    schemaController: schemaController(),
    clientErrorHandler: answerClientError,
    // Router-level rejections (malformed URL, over-long path parameter) never reach the error handler; they are
    // rendered from the same catalog here.
    frameworkErrors: (error, _request, reply) => {
      const clientError = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      sendProblem(reply, clientError ? new AppError('VALIDATION_FAILED', error.message) : new AppError('INTERNAL_ERROR'))
    },
  }
}
