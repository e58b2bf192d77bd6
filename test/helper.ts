import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, inject } from 'vitest'
import app from '../app.js'
import { openPostgres } from '../db/database.js'
import { loadEnv, type Env } from '../lib/env.js'
import { buildService } from '../lib/http/build.js'
import { serverOptions } from '../lib/http/server-options.js'

export const TEST_JWT_SECRET = 'test-jwt-secret-that-is-at-least-32-bytes-long'

export function testEnv(overrides: Record<string, string> = {}): Env {
  return loadEnv({
    NODE_ENV: 'test',
    DATABASE_URL: inject('databaseUrl'),
    LOG_LEVEL: 'silent',
    SVC_JWT_SECRET: TEST_JWT_SECRET,
    SVC_BCRYPT_COST: '4',
    // Every test request comes from one address; the limiter has its own tests with a low limit.
    SVC_LOGIN_IP_PER_MINUTE: '1000000',
    // Dispatch works across tenants; its tests run it against databases of their own.
    SVC_SMS_DISPATCHER: 'off',
    SVC_DB_POOL_MAX: '5',
    SVC_MIGRATE_ON_START: 'false',
    ...overrides,
  })
}

/** Builds the production app against the test database (migrated once by the global setup). */
export async function buildTestApp(overrides: Record<string, string> = {}): Promise<FastifyInstance> {
  const env = testEnv(overrides)
  return buildService(env, openPostgres(env.DATABASE_URL!, env.SVC_DB_POOL_MAX))
}

/** One app per test file, closed after it: `const app = useTestApp()` then `app.current.inject(...)`. */
export function useTestApp(overrides: Record<string, string> = {}): { current: FastifyInstance } {
  const holder = {} as { current: FastifyInstance }
  beforeAll(async () => {
    holder.current = await buildTestApp(overrides)
  })
  afterAll(async () => {
    await holder.current?.close()
  })
  return holder
}

/**
 * The production app plus test-only routes registered beside the real ones, for exercising plugins (tenant
 * transaction, problem rendering) through real requests.
 */
export async function buildAppWith(
  extend: (app: FastifyInstance) => Promise<void>,
  overrides: Record<string, string> = {},
): Promise<FastifyInstance> {
  const env = testEnv(overrides)
  const fastify = Fastify(serverOptions(env)).withTypeProvider<TypeBoxTypeProvider>()
  await fastify.register(fp(app), { env, database: openPostgres(env.DATABASE_URL!, env.SVC_DB_POOL_MAX) })
  await fastify.register(extend)
  await fastify.ready()
  return fastify
}
