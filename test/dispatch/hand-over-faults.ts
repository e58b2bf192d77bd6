import type { Kysely } from 'kysely'
import pino from 'pino'
import { openPostgres, type Database } from '../../db/database.js'
import type { DB } from '../../db/schema.js'
import { createExtSmsProvider } from '../../lib/dispatch/providers/extsms.js'
import type { GroupOwner, SmsProvider } from '../../lib/dispatch/providers/provider.js'
import { fakeExtSmsCredentials } from './dispatch-test-bed.js'
import type { FakeCall, FakePhase } from '../support/fakes/extsms-server.js'
import { databaseDriver } from '../support/helper.js'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js'

/**
 * What the exactly-once tests (test/dispatch/exactly-once.test.ts, leases.test.ts) break a hand-over with: a
 * dispatcher's database behind a proxy the test cuts, a provider that lets the test act between two phases, calls
 * marked by instance, and logs kept for their assertions.
 */

/** How often the fake sent each recipient of one message, by recipient index: exactly once is `1` for every one. */
export function acceptedCounts(sent: { customFields: Record<string, string> }[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const message of sent) counts[message.customFields.svcRecipient!] = (counts[message.customFields.svcRecipient!] ?? 0) + 1
  return counts
}

/** The group an attempt left open for the next holder, as stored. */
export async function openGroupOf(owner: Kysely<DB>, smsId: number): Promise<string | null> {
  const row = await owner.selectFrom('smsMessages').select('openGroupId').where('id', '=', smsId).executeTakeFirstOrThrow()
  return row.openGroupId
}

export interface LogLine {
  level: number
  msg: string
  [field: string]: unknown
}

/** A logger whose lines (info and above) are kept as parsed JSON. */
export function capturedLog() {
  const lines: LogLine[] = []
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) })
  return { log, lines, has: (msg: string) => lines.some((line) => line.msg === msg) }
}

const INSTANCE_HEADER = 'x-test-instance'

/** The live adapter to the fake, each call marked with `instance`, so the fake's `calls` tell instances apart. */
export function markedExtSms(baseUrl: string, instance: string, timeoutMs: number): SmsProvider {
  return createExtSmsProvider({
    ...fakeExtSmsCredentials,
    baseUrl,
    timeoutMs,
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), [INSTANCE_HEADER]: instance } }),
  })
}

/** The phases of the calls `instance` made (markedExtSms), in order. */
export function phasesOf(calls: readonly FakeCall[], instance: string): (FakePhase | null)[] {
  return calls.filter((call) => call.headers[INSTANCE_HEADER] === instance).map((call) => call.phase)
}

export interface PhaseEnd {
  phase: FakePhase
  /** The message of the call; a send names only its group. */
  smsId: number | null
  groupId: string | null
}

/**
 * `provider` with `afterCall` run when a call has returned, before the dispatcher sees its answer: where a test
 * cuts the database, holds an answer, or delivers an early report.
 */
export function betweenPhases(provider: SmsProvider, afterCall: (end: PhaseEnd) => Promise<void> | void): SmsProvider {
  const after = async <T>(result: T, end: PhaseEnd): Promise<T> => {
    await afterCall(end)
    return result
  }
  return {
    name: provider.name,
    callTimeoutMs: provider.callTimeoutMs,
    async createGroup(owner: GroupOwner) {
      const created = await provider.createGroup(owner)
      return after(created, { phase: 'create', smsId: owner.smsId, groupId: created.kind === 'ok' ? created.groupId : null })
    },
    async addMessages(groupId, request) {
      return after(await provider.addMessages(groupId, request), { phase: 'add', smsId: request.smsId, groupId })
    },
    async sendGroup(groupId) {
      return after(await provider.sendGroup(groupId), { phase: 'send', smsId: null, groupId })
    },
    async readGroup(groupId, recipients) {
      return after(await provider.readGroup(groupId, recipients), { phase: 'read', smsId: null, groupId })
    },
  }
}

export interface ProxiedDatabase {
  proxy: TcpProxy
  /** The runtime database through the proxy: statements unanswered for 1.5 s and connections not opened in 1 s fail. */
  database: Database
  close(): Promise<void>
}

/** The runtime database at `url` reached through a TCP proxy: frozen, it is a database cut off from this instance. */
export async function databaseBehindProxy(url: string, poolMax = 4): Promise<ProxiedDatabase> {
  const target = new URL(url)
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  // Short timeouts, so a cut is noticed well within a 2 s lease, as the production timeouts are within 30 s.
  const database = openPostgres(proxy.through(url), poolMax, { driver: databaseDriver, statementTimeoutMs: 500, connectTimeoutMs: 1000 })
  return {
    proxy,
    database,
    async close() {
      proxy.thaw()
      await database.close()
      await proxy.close()
    },
  }
}
