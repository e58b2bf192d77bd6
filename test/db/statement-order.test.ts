import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { DRIVER_MODES, openPostgres } from '../../db/database.js'
import { openEmbedded, type EmbeddedDatabase } from '../../db/embedded.js'
import { findUserWithTenant, updateName } from '../../db/repos/tenancy/users.js'
import type { DB } from '../../db/schema.js'
import { openRequestTransaction, withTenant } from '../../db/tenant-transaction.js'
import { enqueueSystemSms, systemSmsSettings } from '../../lib/dispatch/system-messages.js'
import { insertTenantAndSender } from '../support/dispatch-fixtures.js'
import { owner } from '../support/fixtures.js'
import { describePostgres, testEnv } from '../support/helper.js'

interface Store {
  db: Kysely<DB>
  owner: Kysely<DB>
}

const refusedAfterLast = (refused: RegExp, last: RegExp) =>
  expect.objectContaining({ name: 'StatementAfterLastError', message: expect.stringMatching(new RegExp(`${refused.source}.*${last.source}`)) })

/**
 * The ordering rules of db/driver/statement-flags.ts, checked by LentConnection (db/driver/lent-connection.ts) for
 * every store: a programming error is refused before it reaches the server, whichever driver runs the transaction.
 */
function statementOrderTests(open: () => Store): void {
  const settings = systemSmsSettings(testEnv())

  it('refuses a statement after the read that ended its read-only transaction', async () => {
    const { db, owner } = open()
    const { tenantId, senderId } = await insertTenantAndSender(owner)
    const transaction = await openRequestTransaction(db, { tenantId, accessJti: randomUUID(), userId: senderId, readOnly: true })
    try {
      expect(await findUserWithTenant(transaction.db, senderId)).toMatchObject({ id: senderId })
      await expect(sql`select 1 as after_the_end`.execute(transaction.db)).rejects.toEqual(
        refusedAfterLast(/after_the_end/, /svc_signed_in_user/),
      )
      expect(await transaction.end('commit')).toEqual({ outcome: 'committed' })
    } finally {
      // A transaction ends once: after the commit this only frees the connection of a test that failed earlier.
      await transaction.end('rollback')
    }
  })

  it("refuses a statement after the quota's reservation, and nothing of the transaction is kept", async () => {
    const { db, owner } = open()
    const { tenantId } = await insertTenantAndSender(owner)
    const sent = withTenant(db, tenantId, async (trx) => {
      await enqueueSystemSms(trx, settings, { tenantId, to: '01012345678', text: 'code 123456', kind: 'VERIFICATION_CODE' })
      await sql`select 1 as after_the_reservation`.execute(trx)
    })
    await expect(sent).rejects.toEqual(refusedAfterLast(/after_the_reservation/, /svc_reserve_daily_quota/))
    const messages = await owner.selectFrom('smsMessages').select('id').where('tenantId', '=', tenantId).execute()
    const counted = await owner.selectFrom('smsDailyUsage').select('recipients').where('tenantId', '=', tenantId).execute()
    expect({ messages, counted }).toEqual({ messages: [], counted: [] })
  })

  it('refuses a read that ends read-only transactions in a transaction that writes, and the write is not kept', async () => {
    const { db, owner } = open()
    const { tenantId, senderId } = await insertTenantAndSender(owner)
    const changed = withTenant(db, tenantId, async (trx) => {
      await updateName(trx, senderId, 'Changed')
      return findUserWithTenant(trx, senderId)
    })
    await expect(changed).rejects.toEqual(
      expect.objectContaining({ name: 'ReadOnlyEndInWritingTransactionError', message: expect.stringMatching(/svc_signed_in_user/) }),
    )
    const user = await owner.selectFrom('users').select('name').where('id', '=', senderId).executeTakeFirstOrThrow()
    expect(user.name).toBe('Staff')
  })
}

describe('the order of statements in a transaction', () => {
  // Each driver, whatever SVC_DB_DRIVER says for the run.
  for (const driver of DRIVER_MODES) {
    describePostgres(`on the ${driver} driver`, () => {
      let store: Store
      beforeAll(() => {
        const database = openPostgres(inject('runtimeDatabaseUrl'), 1, { driver })
        store = { db: database.db, owner: owner() }
        return () => database.close()
      })
      statementOrderTests(() => store)
    })
  }

  describe('on the embedded store', () => {
    let dir: string
    let store: EmbeddedDatabase
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'svc-statement-order-'))
      store = openEmbedded(join(dir, 'data'))
      await store.migrate()
    }, 60_000)
    afterAll(async () => {
      await store?.close()
      await rm(dir, { recursive: true, force: true })
    })
    statementOrderTests(() => store)
  })
})
