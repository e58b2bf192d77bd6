import AutoLoad from '@fastify/autoload'
import type { FastifyInstance } from 'fastify'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Database } from './db/database.js'
import type { Clock } from './lib/clock.js'
import type { Env } from './lib/env.js'
import type { ResolveHost } from './lib/events/resolve-host.js'

export interface AppOptions {
  env: Env
  database: Database
  /** The system clock unless a test fixes the time of day (plugins/platform/clock.ts). */
  clock?: Clock
  /** The system's DNS unless a test makes a name answer what it needs (plugins/events/webhooks.ts). */
  resolveHost?: ResolveHost
  /** Built only to read its routes (the OpenAPI document): nothing at start may query the database (plugins/platform/data-keys.ts). */
  withoutDatabase?: true
  /** False: no cron schedule starts (minute purge, SMS retention and upkeep, dispatch and webhook ticks); their kicks and functions stay. Tests (test/support/helper.ts). */
  scheduledJobs?: boolean
}

const here = dirname(fileURLToPath(import.meta.url))

/**
 * The whole service as one plugin: the plugins, then the route tree. Nothing else. plugins/platform/ holds the
 * cross-cutting plugins, one file each; every other folder of plugins/ is a domain, loaded through its index.ts,
 * which registers the domain's parts and names its routes, logic and repositories. Autoload orders them all by
 * the dependencies they declare.
 */
export default async function app(fastify: FastifyInstance, options: AppOptions): Promise<void> {
  await fastify.register(AutoLoad, {
    dir: join(here, 'plugins'),
    options,
    // A plugin's folder is a domain or the platform, not a URL prefix.
    dirNameRoutePrefix: false,
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
