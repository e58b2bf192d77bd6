import type { Kysely } from 'kysely'
import { findOwnerEntry, findTenantBySlug, insertOwnerEntry, insertTenant } from '../../db/repos/tenancy/tenants.js'
import { insertUser } from '../../db/repos/tenancy/users.js'
import type { DB } from '../../db/schema.js'
import { bindTenant, type TenantTx, withServiceTransaction, withTenant } from '../../db/tenant-transaction.js'
import { violatedUniqueConstraint } from '../../db/errors.js'
import { recordAuditEvent } from '../audit/record.js'
import { AppError } from '../errors.js'
import { normalizeBusinessNumber } from './business-number.js'
import { generateAvatarSeed, generateCustomId, generateTenantSlug } from './identifiers.js'
import { userCreated } from '../sign-in/account-events.js'
import { clientOrigin } from '../sign-in/client-info.js'
import type { AuthDeps, ClientInfo } from '../sign-in/deps.js'
import { openSession } from '../sign-in/open-session.js'
import { normalizeOptionalPhone } from '../account-security/phone/optional-phone.js'
import { hashPassword } from '../sign-in/password-hash.js'
import { checkPasswordPolicy } from '../account-security/password/password-policy.js'
import type { TokenPair } from '../sign-in/tokens.js'
import { toUserResponse, type UserResponse } from '../sign-in/user-response.js'

export interface Registered {
  tokens: TokenPair
  user: UserResponse
}

/** A student joins an existing ACTIVE tenant and is signed in at once. */
export async function registerStudent(
  deps: AuthDeps,
  input: { tenantSlug: string; userLoginId: string; password: string; name: string; phone?: string | null },
  client: ClientInfo,
): Promise<Registered> {
  const tenant = await findTenantBySlug(deps.db, input.tenantSlug)
  if (!tenant) throw new AppError('AUTH_009')
  if (tenant.status !== 'ACTIVE') throw new AppError('AUTH_010')
  checkPasswordPolicy(input.password, input.userLoginId)
  const phone = normalizeOptionalPhone(input.phone)
  const passwordHash = await hashPassword(input.password, deps.env.SVC_BCRYPT_COST)
  try {
    return await withTenant(deps.db, tenant.id, async (trx) => {
      const user = await insertUser(trx, {
        tenantId: tenant.id,
        userLoginId: input.userLoginId,
        passwordHash,
        name: input.name,
        phone,
        role: 'STUDENT',
        avatarSeed: generateAvatarSeed(),
      })
      await recordAuditEvent(trx, tenant.id, clientOrigin(client, null), userCreated(user.id, user.role))
      const tokens = await signInRegistered(trx, deps, { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug }, client)
      return { tokens, user: toUserResponse(user, tenant) }
    })
  } catch (error) {
    if (violatedUniqueConstraint(error) !== null) throw new AppError('AUTH_011')
    throw error
  }
}

export interface OwnerRegistration {
  instituteName: string
  businessRegistrationNumber: string
  userLoginId: string
  password: string
  name: string
}

// Random slug and customId collisions are rare; a few fresh draws settle them.
const IDENTIFIER_ATTEMPTS = 4

/**
 * Creates the tenant, its OWNER and the owner-directory entry in one transaction and opens the first session; the
 * owner's USER_CREATED is in that transaction too, the first event of the tenant's log. The caller publishes
 * OwnerRegisteredEvent once this has returned (after commit).
 */
export async function registerOwner(
  deps: AuthDeps,
  input: OwnerRegistration,
  client: ClientInfo,
): Promise<Registered> {
  const businessNumber = normalizeBusinessNumber(input.businessRegistrationNumber)
  if (!businessNumber) {
    throw new AppError('VALIDATION_FAILED', 'businessRegistrationNumber is not a valid business registration number', {
      errors: [{ field: 'body.businessRegistrationNumber', message: 'is not a valid business registration number' }],
    })
  }
  checkPasswordPolicy(input.password, input.userLoginId)
  if (await findOwnerEntry(deps.db, input.userLoginId)) throw new AppError('AUTH_011')
  const passwordHash = await hashPassword(input.password, deps.env.SVC_BCRYPT_COST)

  for (let attempt = 1; ; attempt++) {
    try {
      return await createOwnerTenant(deps.db, deps, input, businessNumber, passwordHash, client)
    } catch (error) {
      const constraint = violatedUniqueConstraint(error)
      if (constraint === null) throw error
      if (constraint.includes('business_registration_number')) throw new AppError('AUTH_019')
      if (constraint === 'owner_directory_pkey' || constraint === 'owner_directory_login_key') throw new AppError('AUTH_011')
      if (attempt >= IDENTIFIER_ATTEMPTS) throw error
    }
  }
}

async function createOwnerTenant(
  db: Kysely<DB>,
  deps: AuthDeps,
  input: OwnerRegistration,
  businessNumber: string,
  passwordHash: string,
  client: ClientInfo,
): Promise<Registered> {
  return withServiceTransaction(db, async (root) => {
    const tenant = await insertTenant(root, {
      slug: generateTenantSlug(input.instituteName),
      customId: generateCustomId(),
      name: input.instituteName,
      businessRegistrationNumber: businessNumber,
    })
    const trx = await bindTenant(root, tenant.id)
    const user = await insertUser(trx, {
      tenantId: tenant.id,
      userLoginId: input.userLoginId,
      passwordHash,
      name: input.name,
      phone: null,
      role: 'OWNER',
      avatarSeed: generateAvatarSeed(),
    })
    await recordAuditEvent(trx, tenant.id, clientOrigin(client, null), userCreated(user.id, user.role))
    await insertOwnerEntry(root, { userLoginId: user.userLoginId, tenantId: tenant.id, userId: user.id })
    const tokens = await signInRegistered(trx, deps, { userId: user.id, tenantId: tenant.id, tenantSlug: tenant.slug }, client)
    return { tokens, user: toUserResponse(user, tenant) }
  })
}

/** The new user's first session, opened the way a login opens one (openSession), in the registration's transaction. */
async function signInRegistered(
  trx: TenantTx,
  deps: AuthDeps,
  subject: { userId: number; tenantId: number; tenantSlug: string },
  client: ClientInfo,
): Promise<TokenPair> {
  const opened = await openSession(trx, deps, subject, client)
  // The user was inserted ACTIVE by this same uncommitted transaction: nobody else can have changed or removed it.
  if (!opened) throw new Error('a user registered in this transaction is not ACTIVE')
  return opened.tokens
}
