import type { Transaction } from 'kysely'
import { openDatabase } from '../db/open.js'
import { insertGroup, insertMembers } from '../db/repos/sms/recipient-groups.js'
import { revokeSessions } from '../db/repos/sign-in/sessions.js'
import { insertTemplate } from '../db/repos/sms/sms-templates.js'
import { findOwnerEntry, findTenantByCustomId, findTenantBySlug, insertOwnerEntry, insertTenant, type Tenant } from '../db/repos/tenancy/tenants.js'
import { findCredentialsByLoginId, insertUser, updatePasswordHash } from '../db/repos/tenancy/users.js'
import type { DB, Role } from '../db/schema.js'
import { bindTenant, type TenantTx, withServiceTransaction } from '../db/tenant-transaction.js'
import { hashPassword, verifyPassword } from '../lib/sign-in/password-hash.js'
import { checkPasswordPolicy } from '../lib/account-security/password/password-policy.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { normalizePhone } from '../lib/sms/phone.js'
import { normalizeBusinessNumber } from '../lib/tenancy/business-number.js'
import { generateAvatarSeed } from '../lib/tenancy/identifiers.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run seed:demo
 * A demo academy to try every endpoint with (README.md#try-it): an owner, a manager, an instructor, five students,
 * two classes whose enrolments carry guardian phones, the owner's recipient group and a template, on whichever database is
 * configured. Every key is fixed, so a second run finds and reuses what the first made; it also puts back a demo
 * password someone changed (ending that user's sessions, as a reset does), so the printed credentials always work.
 */

const TENANT = {
  slug: 'demo-academy',
  // Generated customIds never contain O or 0, so no registered tenant can ever draw this one.
  customId: 'DEMO2026',
  name: 'Demo Academy',
  businessRegistrationNumber: '124-81-00998',
}

interface DemoUser {
  role: Role
  userLoginId: string
  password: string
  name: string
  phone: string | null
  guardianPhone?: string
}

const STUDENT_PASSWORD = 'Academy-Student-26'
const student = (n: number, name: string): DemoUser => ({
  role: 'STUDENT',
  userLoginId: `demo-student-${n}`,
  password: STUDENT_PASSWORD,
  name,
  phone: null,
  guardianPhone: `010-3000-000${n}`,
})

const USERS: readonly DemoUser[] = [
  { role: 'OWNER', userLoginId: 'demo-owner', password: 'Academy-Owner-26', name: 'Kim Owner', phone: '010-2026-0001' },
  { role: 'MANAGER', userLoginId: 'demo-manager', password: 'Academy-Manager-26', name: 'Lee Manager', phone: '010-2026-0002' },
  { role: 'INSTRUCTOR', userLoginId: 'demo-instructor', password: 'Academy-Teacher-26', name: 'Park Teacher', phone: '010-2026-0003' },
  student(1, 'Choi Minji'),
  student(2, 'Jung Hana'),
  student(3, 'Kang Jisoo'),
  student(4, 'Yoon Seojun'),
  student(5, 'Han Doyun'),
]

const CLASSES = [
  { name: 'Math A', students: ['demo-student-1', 'demo-student-2', 'demo-student-3'] },
  { name: 'English B', students: ['demo-student-3', 'demo-student-4', 'demo-student-5'] },
]

const GROUP_NAME = 'All guardians'
const TEMPLATE = {
  name: 'Class notice',
  content: 'Hello, guardian of {name}: {className} starts at 4 pm today.',
  category: 'GENERAL' as const,
}

function phoneOf(input: string): string {
  const phone = normalizePhone(input)
  if (phone === null) throw new Error(`demo phone ${input} is not valid`)
  return phone
}

/** The tenant by its fixed slug, or a new one; another tenant holding its customId or number stops the seed. */
async function ensureTenant(root: Transaction<DB>): Promise<Tenant> {
  const existing = await findTenantBySlug(root, TENANT.slug)
  if (existing) return existing
  const businessRegistrationNumber = normalizeBusinessNumber(TENANT.businessRegistrationNumber)
  if (!businessRegistrationNumber) throw new Error('demo business registration number is not valid')
  const holder = await findTenantByCustomId(root, TENANT.customId)
  if (holder) throw new UsageError(`customId ${TENANT.customId} already belongs to tenant "${holder.slug}"`)
  const numberHolder = await root
    .selectFrom('tenants')
    .select('slug')
    .where('businessRegistrationNumber', '=', businessRegistrationNumber)
    .executeTakeFirst()
  if (numberHolder) {
    throw new UsageError(`business registration number ${TENANT.businessRegistrationNumber} already belongs to tenant "${numberHolder.slug}"`)
  }
  return insertTenant(root, { slug: TENANT.slug, customId: TENANT.customId, name: TENANT.name, businessRegistrationNumber })
}

/** Each bcrypt hash once per run: the students share a password. */
function hasher(cost: number): (password: string) => Promise<string> {
  const hashes = new Map<string, Promise<string>>()
  return (password) => {
    let hash = hashes.get(password)
    if (!hash) {
      hash = hashPassword(password, cost)
      hashes.set(password, hash)
    }
    return hash
  }
}

async function ensureUser(trx: TenantTx, tenantId: number, user: DemoUser, hash: (password: string) => Promise<string>): Promise<number> {
  const existing = await findCredentialsByLoginId(trx, user.userLoginId)
  if (!existing) {
    const created = await insertUser(trx, {
      tenantId,
      userLoginId: user.userLoginId,
      passwordHash: await hash(user.password),
      name: user.name,
      phone: user.phone === null ? null : phoneOf(user.phone),
      role: user.role,
      avatarSeed: generateAvatarSeed(),
    })
    return created.id
  }
  if (existing.role !== user.role) {
    throw new UsageError(`${user.userLoginId} exists in ${TENANT.slug} with role ${existing.role}, not ${user.role}`)
  }
  if (!(await verifyPassword(user.password, existing.passwordHash))) {
    await updatePasswordHash(trx, existing.id, await hash(user.password))
    await revokeSessions(trx, { userId: existing.id }, 'PASSWORD_RESET')
  }
  return existing.id
}

/** Root entry (login without customId) finds the owner through the directory, which has no RLS. */
async function ensureOwnerEntry(root: Transaction<DB>, tenantId: number, userId: number, userLoginId: string): Promise<void> {
  const entry = await findOwnerEntry(root, userLoginId)
  if (!entry) {
    await insertOwnerEntry(root, { userLoginId, tenantId, userId })
    return
  }
  if (entry.tenantId !== tenantId || entry.userId !== userId) {
    throw new UsageError(`owner login id ${userLoginId} already belongs to another tenant's owner`)
  }
}

async function ensureClass(trx: TenantTx, tenantId: number, name: string, students: Array<{ id: number; guardianPhone: string }>) {
  const found = await trx.selectFrom('classes').select('id').where('name', '=', name).orderBy('id').executeTakeFirst()
  const classId = found?.id ?? (await trx.insertInto('classes').values({ tenantId, name }).returning('id').executeTakeFirstOrThrow()).id
  for (const { id: studentId, guardianPhone } of students) {
    const enrolled = await trx
      .selectFrom('classEnrollments')
      .select('id')
      .where('classId', '=', classId)
      .where('studentId', '=', studentId)
      .executeTakeFirst()
    if (!enrolled) {
      await trx.insertInto('classEnrollments').values({ tenantId, classId, studentId, guardianPhone, status: 'ACTIVE' }).execute()
    }
  }
  return { id: classId, name }
}

async function ensureGroup(trx: TenantTx, tenantId: number, ownerStaffId: number, members: Array<{ id: number; name: string; guardianPhone: string }>) {
  const found = await trx
    .selectFrom('recipientGroups')
    .select('id')
    .where('ownerStaffId', '=', ownerStaffId)
    .where('name', '=', GROUP_NAME)
    .orderBy('id')
    .executeTakeFirst()
  if (found) return found.id
  const group = await insertGroup(trx, { tenantId, ownerStaffId, name: GROUP_NAME, icon: null, recipientCount: members.length })
  await insertMembers(
    trx,
    tenantId,
    group.id,
    members.map((member) => ({ phone: member.guardianPhone, name: member.name, studentId: member.id, className: null, recipientRole: 'GUARDIAN' })),
  )
  return group.id
}

async function ensureTemplate(trx: TenantTx, tenantId: number, createdBy: number): Promise<number> {
  const found = await trx.selectFrom('smsTemplates').select('id').where('name', '=', TEMPLATE.name).orderBy('id').executeTakeFirst()
  return found?.id ?? (await insertTemplate(trx, { tenantId, createdBy, ...TEMPLATE })).id
}

await runScript(async () => {
  for (const user of USERS) checkPasswordPolicy(user.password, user.userLoginId)
  loadDotEnv()
  const env = loadEnv()
  const database = await openDatabase(env)
  try {
    if (env.SVC_MIGRATE_ON_START) await database.migrate()
    const hash = hasher(env.SVC_BCRYPT_COST)
    // One transaction: a failed seed leaves nothing half made. Tenants and the owner directory have no RLS; the rest
    // is written after binding the tenant, as the runtime role, like any request.
    const seeded = await withServiceTransaction(database.db, async (root) => {
      const tenant = await ensureTenant(root)
      const trx = await bindTenant(root, tenant.id)
      const ids = new Map<string, number>()
      for (const user of USERS) ids.set(user.userLoginId, await ensureUser(trx, tenant.id, user, hash))
      const idOf = (loginId: string) => ids.get(loginId)!
      const owner = USERS.find((user) => user.role === 'OWNER')!
      await ensureOwnerEntry(root, tenant.id, idOf(owner.userLoginId), owner.userLoginId)

      const students = USERS.filter((user) => user.guardianPhone !== undefined).map((user) => ({
        id: idOf(user.userLoginId),
        loginId: user.userLoginId,
        name: user.name,
        guardianPhone: phoneOf(user.guardianPhone!),
      }))
      const classes = []
      for (const demoClass of CLASSES) {
        const enrolled = students.filter((s) => demoClass.students.includes(s.loginId))
        classes.push(await ensureClass(trx, tenant.id, demoClass.name, enrolled))
      }
      // Groups are personal (only their creator sees them): the owner's, so the first login can send to it.
      const recipientGroupId = await ensureGroup(trx, tenant.id, idOf(owner.userLoginId), students)
      const templateId = await ensureTemplate(trx, tenant.id, idOf('demo-manager'))
      return { tenant, classes, recipientGroupId, templateId }
    })
    return {
      customId: seeded.tenant.customId,
      tenantSlug: seeded.tenant.slug,
      users: USERS.map(({ role, userLoginId, password }) => ({ role, userLoginId, password })),
      classes: seeded.classes,
      recipientGroupId: seeded.recipientGroupId,
      templateId: seeded.templateId,
    }
  } finally {
    await database.close()
  }
})
