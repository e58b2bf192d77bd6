import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openEmbedded } from '../../db/embedded.js'
import type { DB } from '../../db/schema.js'
import { hashPassword } from '../../lib/sign-in/password-hash.js'
import { buildService } from '../../build.js'
import { buildTestApp, itPostgres, sharedEmbeddedDatabase, testEnv } from '../support/helper.js'
import { isolatedDatabase } from '../support/isolated-database.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

// The credentials the README documents: changing them here means changing them there.
const DOCUMENTED_USERS = [
  { role: 'OWNER', userLoginId: 'demo-owner', password: 'Academy-Owner-26' },
  { role: 'MANAGER', userLoginId: 'demo-manager', password: 'Academy-Manager-26' },
  { role: 'INSTRUCTOR', userLoginId: 'demo-instructor', password: 'Academy-Teacher-26' },
  ...[1, 2, 3, 4, 5].map((n) => ({ role: 'STUDENT', userLoginId: `demo-student-${n}`, password: 'Academy-Student-26' })),
]

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs scripts/seed-demo.ts in its own process, as `npm run seed:demo` does after the build. */
function seedDemo(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/seed-demo.ts'],
      { cwd: root, env: { ...process.env, NODE_ENV: 'test', SVC_BCRYPT_COST: '4', ...env }, timeout: 90_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

/** Where the script writes, and how the test reads it back once the script has exited. */
interface Target {
  env: Record<string, string>
  open(): Promise<{ owner: Kysely<DB>; app: FastifyInstance; close(): Promise<void> }>
  cleanup(): Promise<void>
}

async function postgresTarget(): Promise<Target> {
  const iso = await isolatedDatabase()
  return {
    env: { DATABASE_URL: iso.url, DATABASE_MIGRATION_URL: iso.ownerUrl },
    async open() {
      const app = await buildTestApp({ DATABASE_URL: iso.url })
      return { owner: iso.owner, app, close: () => app.close() }
    },
    cleanup: () => iso.drop(),
  }
}

async function embeddedTarget(): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-seed-'))
  return {
    env: { DATABASE_URL: '', SVC_DATA_DIR: dataDir },
    async open() {
      // Only now: PGlite allows one process per directory, and the script's process has ended.
      const store = openEmbedded(dataDir)
      const app = await buildService(testEnv(), sharedEmbeddedDatabase(store))
      return {
        owner: store.owner,
        app,
        async close() {
          await app.close()
          await store.close()
        },
      }
    },
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  }
}

async function counts(owner: Kysely<DB>) {
  const tenants = await owner.selectFrom('tenants').select(['id', 'slug', 'customId', 'businessRegistrationNumber']).where('slug', '=', 'demo-academy').execute()
  expect(tenants).toHaveLength(1)
  const tenantId = tenants[0]!.id
  const count = async (table: 'users' | 'classes' | 'classEnrollments' | 'recipientGroups' | 'recipientGroupMembers' | 'smsTemplates') => {
    const row = await owner.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('count')).where('tenantId', '=', tenantId).executeTakeFirstOrThrow()
    return Number(row.count)
  }
  return {
    tenant: tenants[0],
    ownerEntries: await owner.selectFrom('ownerDirectory').select(['tenantId']).where('userLoginId', '=', 'demo-owner').execute(),
    users: await count('users'),
    classes: await count('classes'),
    enrollments: await owner
      .selectFrom('classEnrollments')
      .select(['status', 'guardianPhone'])
      .where('tenantId', '=', tenantId)
      .orderBy('id')
      .execute(),
    groups: await count('recipientGroups'),
    members: await count('recipientGroupMembers'),
    templates: await count('smsTemplates'),
  }
}

async function seedTwiceAndTry(target: Target): Promise<void> {
  try {
    const first = await seedDemo(target.env)
    expect(first, first.stderr).toMatchObject({ code: 0, stderr: '' })
    const printed = JSON.parse(first.stdout)
    expect(printed).toMatchObject({ customId: 'DEMO2026', tenantSlug: 'demo-academy', users: DOCUMENTED_USERS })
    expect(printed.classes.map((c: { name: string }) => c.name)).toEqual(['Math A', 'English B'])

    // Someone changed a demo password in between: the second run puts the documented one back.
    let data = await target.open()
    try {
      await data.owner
        .updateTable('users')
        .set({ passwordHash: await hashPassword('Changed-Pass-99', 4) })
        .where('userLoginId', '=', 'demo-manager')
        .execute()
    } finally {
      await data.close()
    }

    const second = await seedDemo(target.env)
    expect(second, second.stderr).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(second.stdout)).toEqual(printed)

    data = await target.open()
    try {
      expect(await counts(data.owner)).toEqual({
        tenant: expect.objectContaining({ customId: 'DEMO2026', businessRegistrationNumber: '1248100998' }),
        ownerEntries: [{ tenantId: expect.any(Number) }],
        users: 8,
        classes: 2,
        enrollments: Array.from({ length: 6 }, () => ({ status: 'ACTIVE', guardianPhone: expect.stringMatching(/^010\d{8}$/) })),
        groups: 1,
        members: 5,
        templates: 1,
      })

      const app = data.app
      for (const user of DOCUMENTED_USERS) {
        const login = await app.inject({
          method: 'POST',
          url: '/v1/login',
          payload: { userLoginId: user.userLoginId, password: user.password, customId: printed.customId },
        })
        expect(login.statusCode, user.userLoginId).toBe(200)
        expect(login.json().user).toMatchObject({ userLoginId: user.userLoginId, role: user.role, tenantSlug: 'demo-academy' })
      }
      // Root entry: the owner directory row leads to the tenant.
      const rootLogin = await app.inject({ method: 'POST', url: '/v1/login', payload: { userLoginId: 'demo-owner', password: 'Academy-Owner-26' } })
      expect(rootLogin.statusCode).toBe(200)
      const cookie = rootLogin.cookies.find((c) => c.name === 'svc_access_token')!
      const headers = { authorization: `Bearer ${cookie.value}` }

      // The demo data is usable as the README says: a class send, the owner's group and the template.
      const classSend = await app.inject({
        method: 'POST',
        url: `/v1/sms/send/class/${printed.classes[0].id}`,
        headers: { ...headers, 'idempotency-key': 'seed-test-class' },
        payload: { title: 'Notice', content: '{className}: {name}', templateId: printed.templateId },
      })
      expect(classSend.statusCode, classSend.body).toBe(201)
      expect(classSend.json()).toMatchObject({ recipientCount: 3, recipientType: 'GUARDIAN', templateId: printed.templateId })
      const groupSend = await app.inject({
        method: 'POST',
        url: '/v1/sms/send',
        headers: { ...headers, 'idempotency-key': 'seed-test-group' },
        payload: { title: 'Notice', content: 'Hello', recipientGroupId: printed.recipientGroupId },
      })
      expect(groupSend.statusCode, groupSend.body).toBe(201)
      expect(groupSend.json()).toMatchObject({ recipientCount: 5, recipientGroupId: printed.recipientGroupId })
    } finally {
      await data.close()
    }
  } finally {
    await target.cleanup()
  }
}

describe('npm run seed:demo', () => {
  itPostgres('on PostgreSQL (DATABASE_URL): runs twice without failing or duplicating, and its printed logins work', async () => {
    await seedTwiceAndTry(await postgresTarget())
  }, 120_000)

  // Whatever the run's backend: the script opens a store of its own in a scratch directory.
  it('on the embedded store (DATABASE_URL unset): runs twice without failing or duplicating, and its printed logins work', async () => {
    await seedTwiceAndTry(await embeddedTarget())
  }, 180_000)
})
