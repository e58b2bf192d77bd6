import { parseArgs } from 'node:util'
import { openDatabase } from '../db/open.js'
import { findTenantBySlug } from '../db/repos/tenancy/tenants.js'
import { createUserAdministration, type CreatableRole } from '../lib/sign-in/contract.js'
import { CREATABLE_ROLES } from '../lib/tenancy/user-admin.js'
import { loadDotEnv, loadEnv } from '../lib/env.js'
import { normalizePhone } from '../lib/sms/phone.js'
import { runScript, UsageError } from './run-script.js'

/**
 * npm run user:create -- --tenant SLUG --role ROLE --name NAME [--phone PHONE]
 * How operations make staff accounts (docs/operations.md#scripts): runs the in-process createUser and prints
 * {"userId", "userLoginId", "temporaryPassword"}.
 */
const USAGE = 'usage: npm run user:create -- --tenant SLUG --role MANAGER|INSTRUCTOR|STUDENT --name NAME [--phone PHONE]'

function parseOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        tenant: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
        phone: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`)
  }
}

function parseCommandLine(argv: string[]) {
  const { tenant, role, name, phone } = parseOptions(argv)
  if (!tenant || !role || !name) throw new UsageError(`--tenant, --role and --name are required\n${USAGE}`)
  const upperRole = role.toUpperCase()
  if (!(CREATABLE_ROLES as readonly string[]).includes(upperRole)) {
    // Owners exist only with their tenant, made by POST /v1/register/owner.
    throw new UsageError(`--role must be one of ${CREATABLE_ROLES.join(', ')} (got "${role}"); owners come from owner registration`)
  }
  // Checked before the database opens; createUser checks again and stores the normalised form.
  if (phone !== undefined && phone.trim() !== '' && normalizePhone(phone) === null) {
    throw new UsageError(`--phone "${phone}" is not a valid phone number`)
  }
  return { tenant, role: upperRole as CreatableRole, name, phone: phone ?? null }
}

await runScript(async () => {
  const args = parseCommandLine(process.argv.slice(2))
  loadDotEnv()
  const env = loadEnv()
  const database = await openDatabase(env)
  try {
    const tenant = await findTenantBySlug(database.db, args.tenant)
    if (!tenant) throw new UsageError(`no tenant with slug "${args.tenant}"`)
    const users = createUserAdministration({ db: database.db, env })
    return await users.createUser(args.name, args.phone, args.role, tenant.id)
  } finally {
    await database.close()
  }
})
