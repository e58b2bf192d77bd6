import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance } from 'fastify'
import { cpSync, rmSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, inject, it, type TestFunction } from 'vitest'
import app from '../../app.js'
import { openPostgres, type Database } from '../../db/database.js'
import { openEmbedded, type EmbeddedDatabase } from '../../db/embedded.js'
import { postgresOptions } from '../../db/open.js'
import { loadEnv, type Env } from '../../lib/env.js'
import { buildService } from '../../build.js'
import { serverOptions } from '../../lib/http/server-options.js'
import { watchDocumentedProblems } from './documented-problems.js'
import type { Clock } from '../../lib/clock.js'
import type { ResolveHost } from '../../lib/events/resolve-host.js'

export const TEST_JWT_SECRET = 'test-jwt-secret-that-is-at-least-32-bytes-long'

/** The run's backend, chosen by test/support/global-setup.ts: 'postgres' (a real server) or 'embedded' (PGlite). */
export const databaseKind = inject('databaseKind')
export const isEmbedded = databaseKind === 'embedded'
/** The pg driver of the run's runtime databases (SVC_DB_DRIVER of the test command, default pipelined). */
export const databaseDriver = inject('databaseDriver')
const isPipelined = !isEmbedded && databaseDriver === 'pipelined'

const ONE_CONNECTION = 'skipped on the embedded store: needs several concurrent database connections'
const SERVER_ONLY = 'skipped on the embedded store: needs a PostgreSQL server'
const PIPELINED_ONLY = 'skipped with SVC_DB_DRIVER=plain: pins what the pipelined driver sends'

/**
 * For tests that need two database sessions at the same time (a second request racing an open transaction, row
 * locks, SKIP LOCKED claims). The embedded store has one connection, which serialises them. Use like `it`:
 * `needsConcurrency('answers 409 while the first request runs', async () => { ... })`.
 */
export const needsConcurrency = it.skipIf(isEmbedded)

/** Like `needsConcurrency`, and the skipped test's name carries the reason. */
export function itConcurrent(name: string, fn: TestFunction, timeout?: number): void {
  if (isEmbedded) it.skip(`${name} [${ONE_CONNECTION}]`, fn)
  else it(name, fn, timeout)
}

/** For tests that need a PostgreSQL server itself (create database, a second process, a connection URL). */
export const needsPostgres = it.skipIf(isEmbedded)

/** Like `needsPostgres`, and the skipped test's name carries the reason. */
export function itPostgres(name: string, fn: TestFunction, timeout?: number): void {
  if (isEmbedded) it.skip(`${name} [${SERVER_ONLY}]`, fn)
  else it(name, fn, timeout)
}

/**
 * For a driver test: one that pins the pipelined driver's exchanges, batches, held statements or prepared names
 * (db/driver/README.md). Skipped, with the reason in its name, on the embedded store and with SVC_DB_DRIVER=plain.
 */
export function itPipelined(name: string, fn: TestFunction, timeout?: number): void {
  if (isPipelined) it(name, fn, timeout)
  else it.skip(`${name} [${isEmbedded ? SERVER_ONLY : PIPELINED_ONLY}]`, fn)
}

/** Like `describe` for a suite of driver tests (see `itPipelined`). */
export function describePipelined(name: string, fn: () => void): void {
  if (isPipelined) describe(name, fn)
  else describe.skip(`${name} [${isEmbedded ? SERVER_ONLY : PIPELINED_ONLY}]`, fn)
}

/**
 * Like `describe` for a suite whose every test needs a PostgreSQL server (a child process opening the run's
 * database by URL, create database); on the embedded store the suite is skipped and its name carries the reason.
 */
export function describePostgres(name: string, fn: () => void): void {
  if (isEmbedded) describe.skip(`${name} [${SERVER_ONLY}]`, fn)
  else describe(name, fn)
}

let fileStore: { store: EmbeddedDatabase; dir: string } | undefined

/**
 * The test file's own embedded store: a copy of the run's migrated template, opened on first use and closed after
 * the file. PGlite lives inside one process, so the worker processes cannot share one store as they share a
 * PostgreSQL database; a copy per file keeps files independent (and parallel) without migrating each time.
 */
export function embeddedStore(): EmbeddedDatabase {
  if (!isEmbedded) throw new Error('embeddedStore() is only available when the run uses the embedded store')
  if (!fileStore) {
    const dir = join(inject('embeddedRoot'), `file-${randomBytes(6).toString('hex')}`)
    cpSync(inject('embeddedTemplateDir'), dir, { recursive: true })
    fileStore = { store: openEmbedded(dir), dir }
  }
  return fileStore.store
}

// Registered at import, so it belongs to the importing file's root suite and runs after every describe block's
// afterAll (apps close before their store does).
if (isEmbedded) {
  afterAll(async () => {
    const open = fileStore
    fileStore = undefined
    if (!open) return
    await open.store.close()
    rmSync(open.dir, { recursive: true, force: true })
  })
}

export function testEnv(overrides: Record<string, string | undefined> = {}): Env {
  return loadEnv({
    NODE_ENV: 'test',
    // Unset on the embedded backend: openTestDatabase then hands out the file's store. On PostgreSQL the service
    // runs as the least-privilege login role and only migrations as the owner, as in production.
    DATABASE_URL: isEmbedded ? undefined : inject('runtimeDatabaseUrl'),
    DATABASE_MIGRATION_URL: isEmbedded ? undefined : inject('databaseUrl'),
    SVC_DB_DRIVER: databaseDriver,
    LOG_LEVEL: 'silent',
    SVC_JWT_SECRET: TEST_JWT_SECRET,
    SVC_BCRYPT_COST: '4',
    // Every test request comes from one address; the limiter has its own tests with a low limit.
    SVC_LOGIN_IP_PER_MINUTE: '1000000',
    // Dispatch works across tenants; its tests run it against databases of their own.
    SVC_SMS_DISPATCHER: 'off',
    // Partition upkeep opens an owner connection at every start; its tests turn it on or call it.
    SVC_SMS_PARTITION_UPKEEP: 'off',
    SVC_DB_POOL_MAX: '5',
    SVC_MIGRATE_ON_START: 'false',
    // Another database named without its owner: the run's owner URL would name the wrong database.
    ...('DATABASE_URL' in overrides && !('DATABASE_MIGRATION_URL' in overrides) ? { DATABASE_MIGRATION_URL: undefined } : {}),
    ...overrides,
  })
}

/**
 * The runtime database for a test app: PostgreSQL when the env names one (always, on the postgres backend; an
 * explicit DATABASE_URL override on either), else the file's embedded store. Apps share that store, so closing
 * an app leaves it open for the rest of the file.
 */
export function openTestDatabase(env: Env = testEnv()): Database {
  if (env.DATABASE_URL) return openPostgres(env.DATABASE_URL, env.SVC_DB_POOL_MAX, postgresOptions(env))
  return sharedEmbeddedDatabase(embeddedStore())
}

/** The file's embedded store as an app's database: closing the app leaves the store open. */
export function sharedEmbeddedDatabase(store: EmbeddedDatabase): Database {
  return {
    db: store.db,
    kind: 'embedded',
    migrate: () => store.migrate(),
    asOwner: (work) => store.asOwner(work),
    probe: () => store.probe(),
    close: async () => undefined,
  }
}

/** What a test app is built with; everything is optional. */
export interface TestAppOptions {
  /** Overrides of testEnv(). */
  env?: Record<string, string | undefined>
  /** Fixes the time of day (plugins/platform/clock.ts). */
  clock?: Clock
  /** Makes a host name answer what the test needs (plugins/events/webhooks.ts). */
  resolveHost?: ResolveHost
  /** Test-only routes registered beside the real ones, for exercising plugins through real requests. */
  extend?: (app: FastifyInstance) => Promise<void>
  /** Runs on the bare instance before the app is registered (an onRoute hook that must see every route). */
  before?: (app: FastifyInstance) => void
  /** The real logger hands every line (JSON text) here, for tests of what the logs carry. */
  onLine?: (line: string) => void
  /** Runs once the app is registered, before it starts (event subscribers, say). */
  beforeReady?: (app: FastifyInstance) => void
  /** The cron schedules (AppOptions.scheduledJobs): off in test apps, on only in tests of a schedule itself. */
  scheduledJobs?: boolean
}

/**
 * Builds the production app against the test database (migrated once by the global setup). Its cron schedules are
 * off unless asked for: a test calls the job it tests (purgeExpired, dispatcher.kick), so no minute job races it.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<FastifyInstance> {
  return assemble(testEnv(options.env), options)
}

async function assemble(env: Env, options: TestAppOptions): Promise<FastifyInstance> {
  const server = serverOptions(env)
  const { onLine } = options
  const logger = onLine ? { ...(server.logger as object), stream: linesTo(onLine) } : server.logger
  const fastify = Fastify({ ...server, logger }).withTypeProvider<TypeBoxTypeProvider>()
  // As before the builders were one: apps logging to a test were not watched.
  if (!onLine) watchDocumentedProblems(fastify)
  options.before?.(fastify)
  const { clock, resolveHost, scheduledJobs = false } = options
  await fastify.register(fp(app), { env, database: openTestDatabase(env), clock, resolveHost, scheduledJobs })
  if (options.extend) await fastify.register(options.extend)
  options.beforeReady?.(fastify)
  try {
    await fastify.ready()
  } catch (error) {
    // An app that refuses to start (tests of start-up checks) still gives its pool back.
    await fastify.close().catch(() => undefined)
    throw error
  }
  return fastify
}

function linesTo(onLine: (line: string) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) onLine(line)
      done()
    },
  })
}

/**
 * The one way to a file's (or a describe block's) app: built before its tests, closed after them. Options that
 * depend on an earlier beforeAll (a database of the file's own) are given as a function, read when the app is built:
 * `const app = useTestApp(() => ({ env: { DATABASE_URL: iso.url } }))` then `app.current.inject(...)`.
 */
export function useTestApp(options: TestAppOptions | (() => TestAppOptions) = {}): { current: FastifyInstance } {
  const holder = {} as { current: FastifyInstance }
  beforeAll(async () => {
    holder.current = await startTestApp(typeof options === 'function' ? options() : options)
  })
  afterAll(async () => {
    await holder.current?.close()
  })
  return holder
}

/** For a test that builds its own app (an env per test, a start-up refusal); a file's app comes from useTestApp. */
export async function buildTestApp(
  overrides: Record<string, string | undefined> = {},
  clock?: Clock,
  resolveHost?: ResolveHost,
): Promise<FastifyInstance> {
  return startTestApp({ env: overrides, clock, resolveHost })
}

/** Like buildTestApp, with test-only routes registered beside the real ones (TestAppOptions.extend). */
export async function buildAppWith(
  extend: (app: FastifyInstance) => Promise<void>,
  overrides: Record<string, string | undefined> = {},
  before?: (app: FastifyInstance) => void,
): Promise<FastifyInstance> {
  return startTestApp({ extend, env: overrides, before })
}

/** Like buildTestApp on an env of the test's own, its log lines handed to `onLine` (TestAppOptions.onLine). */
export async function buildAppLoggingTo(
  env: Env,
  onLine: (line: string) => void,
  beforeReady?: (app: FastifyInstance) => void,
): Promise<FastifyInstance> {
  return assemble(env, { onLine, beforeReady })
}
