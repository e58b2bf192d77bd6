import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
import type { LevelWithSilentOrString } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type Parent = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean }

/**
 * A request's logger that becomes pino's child (the request id bound) only when a line is written. Fastify makes a
 * child per request, and with redaction configured pino's child serialises and redacts its bindings at once: a few
 * per cent of GET /v1/me's CPU, for a logger that at LOG_LEVEL=warn writes nothing on a request that goes well. A
 * level the parent has off costs a comparison; the first line at a level it has on makes the child, once.
 */
class RequestLogger {
  readonly #parent: Parent
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #child: FastifyBaseLogger | null = null

  constructor(parent: Parent, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#parent.level
  }

  set level(level: LevelWithSilentOrString) {
    this.#made().level = level
  }

  // Methods on the prototype, not arrow fields: nothing is made per request but the object itself.
  fatal(...args: unknown[]): void {
    this.#write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#write('error', args)
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args)
  }
  info(...args: unknown[]): void {
    this.#write('info', args)
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options)
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === null && this.#parent.isLevelEnabled?.(level) === false) return
    ;(this.#made()[level] as (...forwarded: unknown[]) => void)(...args)
  }

  #made(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options))
  }
}

/**
 * Fastify's `childLoggerFactory`. A route with a log level of its own gets pino's child at once: its level decides
 * what is written, not the parent's.
 */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined) return parent.child(bindings, options)
  return new RequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger
}
