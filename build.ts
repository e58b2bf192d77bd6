import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance } from 'fastify'
import app, { type AppOptions } from './app.js'
import type { Database } from './db/database.js'
import type { Env } from './lib/env.js'
import { serverOptions } from './lib/http/server-options.js'

/**
 * Builds the ready service on an open database; server.ts listens on it, tests inject into it. `before` sees the
 * bare instance first (tests add hooks there that must see every route and request); `seams` are what tests fix: the
 * time of day (the advertising quiet hours) and what a host name resolves to (webhook endpoints); `withoutDatabase`
 * builds it only to read its routes.
 */
export async function buildService(
  env: Env,
  database: Database,
  before?: (fastify: FastifyInstance) => void,
  seams: Pick<AppOptions, 'clock' | 'resolveHost' | 'withoutDatabase'> = {},
): Promise<FastifyInstance> {
  const fastify = Fastify(serverOptions(env)).withTypeProvider<TypeBoxTypeProvider>()
  before?.(fastify)
  await fastify.register(fp(app), { env, database, ...seams })
  await fastify.ready()
  return fastify
}
