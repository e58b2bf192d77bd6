import pino from 'pino'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { Database } from '../../db/database.js'
import { createDispatcher, type Dispatcher, type DispatcherOptions } from '../../lib/dispatch/dispatcher.js'
import { createExtSmsProvider } from '../../lib/dispatch/providers/extsms.js'
import type { SmsProvider } from '../../lib/dispatch/providers/provider.js'
import { startFakeExtSms, type FakeExtSms, type FakeSentMessage } from '../support/fakes/extsms-server.js'
import { isolatedDatabase, type IsolatedDatabase } from '../support/isolated-database.js'

/** The API key and secret the fake provider accepts; the adapters and apps under test present them. */
export const fakeExtSmsCredentials = { apiKey: 'test-key', apiSecret: 'test-secret-value' }

export interface ProviderTestBed {
  /** A database of the file's own: the dispatcher claims due messages of every tenant. */
  iso: IsolatedDatabase
  /** The ExtSms fake on loopback; its faults end after each test, its history stays. */
  fake: FakeExtSms
}

/**
 * An isolated database and the fake provider for the file's tests, made before them and closed after them. Read
 * the fields inside tests and hooks only: they are set by a `beforeAll`. Hooks the file adds after this call
 * close before these do.
 */
export function useProviderTestBed(): ProviderTestBed {
  const bed = {} as ProviderTestBed
  beforeAll(async () => {
    bed.iso = await isolatedDatabase()
    bed.fake = await startFakeExtSms(fakeExtSmsCredentials)
  })
  afterAll(async () => {
    await bed.fake?.close()
    await bed.iso?.drop()
  })
  afterEach(() => bed.fake?.reset())
  return bed
}

export interface DispatchTestBed extends ProviderTestBed {
  /** The runtime database (as svc_app) the dispatchers under test claim and write through. */
  database: Database
  /** The live provider adapter, sending to the fake. */
  extsms(timeoutMs?: number): SmsProvider
  /** A dispatcher over `database`; the live adapter unless `overrides` names another provider. */
  dispatcher(overrides?: Partial<DispatcherOptions>): Dispatcher
  /** The messages the fake received for one SMS, in order. */
  sentFor(smsId: number): FakeSentMessage[]
}

const silent = pino({ level: 'silent' })

/** `useProviderTestBed` plus a runtime database of `poolMax` connections and a dispatcher factory over both. */
export function useDispatchTestBed(poolMax: number): DispatchTestBed {
  const provider = useProviderTestBed()
  const bed = provider as DispatchTestBed
  beforeAll(() => {
    bed.database = provider.iso.open(poolMax)
  })
  afterAll(async () => {
    await bed.database?.close()
  })
  bed.extsms = (timeoutMs = 2000) => createExtSmsProvider({ ...fakeExtSmsCredentials, baseUrl: bed.fake.url, timeoutMs })
  bed.dispatcher = (overrides = {}) =>
    createDispatcher({ db: bed.database.db, provider: bed.extsms(), log: silent, batchSize: 100, maxAttempts: 3, retryBaseSeconds: 30, ...overrides })
  bed.sentFor = (smsId) => bed.fake.sentMessages.filter((message) => message.customFields.svcSmsId === String(smsId))
  return bed
}
