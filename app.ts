import AutoLoad from '@fastify/autoload'
import type { FastifyInstance } from 'fastify'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Database } from './db/database.js'
import type { Clock } from './lib/clock.js'
import type { Env } from './lib/env.js'
import type { ResolveHost } from './lib/webhooks/resolve-host.js'

export interface AppOptions {
  env: Env
  database: Database
  /** The system clock unless a test fixes the time of day (plugins/clock.ts). */
  clock?: Clock
  /** The system's DNS unless a test makes a name answer what it needs (plugins/webhooks.ts). */
  resolveHost?: ResolveHost
  /** Built only to read its routes (the OpenAPI document): nothing at start may query the database (plugins/data-keys.ts). */
  withoutDatabase?: true
}

const here = dirname(fileURLToPath(import.meta.url))

/** The whole service as one plugin: infrastructure plugins first, then the route tree. Nothing else. */
export default async function app(fastify: FastifyInstance, options: AppOptions): Promise<void> {
  await fastify.register(AutoLoad, {
    dir: join(here, 'plugins'),
    options,
    ignorePattern: /\.(test|spec)\.|\.d\.ts$|\.map$/,
  })
  await fastify.register(AutoLoad, {
    dir: join(here, 'routes'),
    options,
    autoHooks: true,
    cascadeHooks: true,
    ignorePattern: /\.(test|spec)\.|schemas\.|\.d\.ts$|\.map$/,
  })
}
