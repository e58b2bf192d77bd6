import pino from 'pino'
import { openPostgres } from '../../db/database.js'
import { createDispatcher } from '../../lib/dispatch/dispatcher.js'
import { createExtSmsProvider } from '../../lib/dispatch/providers/extsms.js'
import type { InstanceConfig } from './dispatch-instance.js'

// A dispatching instance in a process of its own, so a test can kill it with SIGKILL the way an instance dies:
// no stop(), no release, no recording, its sockets closed by the kernel. Started by test/dispatch/dispatch-instance.ts.

const config = JSON.parse(process.argv[2] ?? '{}') as InstanceConfig
const database = openPostgres(config.databaseUrl, 4, { driver: config.driver })
const dispatcher = createDispatcher({
  db: database.db,
  provider: createExtSmsProvider({ ...config.credentials, baseUrl: config.providerUrl, timeoutMs: config.providerTimeoutMs ?? config.leaseSeconds * 1000 - 1500 }),
  log: pino({ level: 'silent' }),
  batchSize: 100,
  maxAttempts: config.maxAttempts,
  retryBaseSeconds: 30,
  leaseSeconds: config.leaseSeconds,
  concurrency: config.concurrency,
})
// The scheduler's tick, faster: work that becomes claimable later (an expired lease) is found without a kick.
setInterval(() => dispatcher.kick(), 100)
dispatcher.kick()
