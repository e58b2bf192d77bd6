import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'
import { SlowFilesFirst } from './test/support/slow-files-first.js'

// Three files at a time even on two cores: the files spend most of their time waiting on PostgreSQL and child
// processes (two workers kept the cores about 65 % busy; three finished a run 55 s sooner, 293 s against 338 s).
const FAST_WORKERS = Math.max(3, availableParallelism() - 1)

/** Tests of the pipelined driver's own behaviour on the wire (db/driver/README.md). */
const WIRE_LEVEL_FILES = [
  'test/db/pg-client.test.ts',
  'test/db/synced-batch.test.ts',
  'test/db/read-only-transaction.test.ts',
  'test/db/session-state.test.ts',
  'test/db/statement-flags.test.ts',
  'test/db/request-transaction.test.ts',
]

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Autoload imports plugins and routes with import(); inlining it lets Vitest load their TypeScript sources.
    server: { deps: { inline: ['@fastify/autoload'] } },
    env: { NODE_ENV: 'test' },
    sequence: { sequencer: SlowFilesFirst },
    // CI reads a machine-readable summary to print its closing line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/topology/**', 'test/browser/**', ...WIRE_LEVEL_FILES],
          globalSetup: ['test/support/global-setup.ts'],
          // Vitest's default (cores - 1) runs one file at a time on a 2-core machine. Several at a time is safe: each
          // file works in tenants of its own, dispatch (which claims any tenant's messages) runs on databases of its own
          // (test/support/isolated-database.ts), and test apps schedule no background job (AppOptions.scheduledJobs).
          maxWorkers: FAST_WORKERS,
          // Files of a worker share its module graph instead of importing the whole app anew each (94 s of imports
          // in a run of 341 s; 217 s without): every file builds its own app, database and tenants through
          // test/support/helper.ts and keeps no state in modules, so nothing leaks from one file into the next.
          isolate: false,
        },
      },
      {
        // The pipelined driver's wire-level tests patch pg's and the socket's prototypes and time the server's
        // answers on one connection: each file in a process of its own, as the rest ran before isolate: false.
        extends: true,
        test: {
          name: 'wire',
          include: WIRE_LEVEL_FILES,
          globalSetup: ['test/support/global-setup.ts'],
          // Vitest runs projects of one group with one worker count: the fast project's.
          maxWorkers: FAST_WORKERS,
          isolate: true,
        },
      },
      {
        // Child processes (two service instances, PgBouncer, HAProxy) on a database of its own. Run after the fast
        // project (a later group), so the two never compete for this machine's cores.
        extends: true,
        test: {
          name: 'topology',
          include: ['test/topology/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          testTimeout: 90_000,
          hookTimeout: 90_000,
        },
      },
      {
        // Headless Chromium against the service listening on loopback, on a test database of its own. Last, alone:
        // a browser is the heaviest process of the run.
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
})
