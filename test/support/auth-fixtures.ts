import { createHmac, randomBytes, randomInt } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import type { Role, UserStatus } from '../../db/schema.js'
import { hashPassword } from '../../lib/sign-in/password-hash.js'
import { AppError, problemType, type ErrorCode } from '../../lib/errors.js'
import { checkDigit } from '../../lib/tenancy/business-number.js'
import { createTenant, insertUser, unique, type UserRow } from './fixtures.js'
import { TEST_JWT_SECRET } from './helper.js'

/** Shared helpers for the authentication tests: registration, login, tokens and problem checks. */

export type Response = LightMyRequestResponse
export type RequestExtras = { headers?: Record<string, string>; remoteAddress?: string }

/** A fresh, valid business registration number (random first nine digits plus the Korean check digit). */
export function validBusinessNumber(options: { hyphens?: boolean } = {}): string {
  const first9 = Array.from({ length: 9 }, () => randomInt(10)).join('')
  const digits = `${first9}${checkDigit(first9)}`
  return options.hyphens ? `${digits.slice(0, 3)}-${digits.slice(3, 5)}-${digits.slice(5)}` : digits
}

/** A password that satisfies the policy and contains no plausible login id. */
export function strongPassword(): string {
  return `Pw-${randomBytes(6).toString('hex')}-42`
}

/** A random client address, so per-address rate limits of one test never touch another. */
export function uniqueAddress(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`
}

export interface AuthResult {
  response: Response
  accessToken: string
  refreshToken: string
  /** `Authorization: Bearer <access token>` */
  bearer: Record<string, string>
}

function cookieValue(response: Response, name: string): string | undefined {
  return response.cookies.find((cookie) => cookie.name === name)?.value
}

function authResult(response: Response): AuthResult {
  const accessToken = cookieValue(response, 'svc_access_token') ?? ''
  const refreshToken = cookieValue(response, 'svc_refresh_token') ?? ''
  return { response, accessToken, refreshToken, bearer: { authorization: `Bearer ${accessToken}` } }
}

export interface OwnerRegistration extends AuthResult {
  loginId: string
  password: string
  businessNumber: string
  user: {
    id: number
    userLoginId: string
    role: Role
    tenantId: number
    tenantSlug: string
    tenantCustomId: string
  }
}

export async function registerOwner(
  app: FastifyInstance,
  body: Partial<Record<'instituteName' | 'businessRegistrationNumber' | 'userLoginId' | 'password' | 'name', string>> = {},
  extras: RequestExtras = {},
): Promise<OwnerRegistration> {
  const payload = {
    instituteName: 'Bright Math Academy',
    businessRegistrationNumber: validBusinessNumber(),
    userLoginId: unique('owner'),
    password: strongPassword(),
    name: 'Kim Owner',
    ...body,
  }
  const response = await app.inject({ method: 'POST', url: '/v1/register/owner', payload, ...extras })
  return {
    ...authResult(response),
    loginId: payload.userLoginId,
    password: payload.password,
    businessNumber: payload.businessRegistrationNumber,
    user: response.statusCode === 201 ? response.json().user : undefined,
  }
}

export interface StudentRegistration extends AuthResult {
  loginId: string
  password: string
  user: { id: number; userLoginId: string; role: Role; tenantId: number; tenantSlug: string; phone: string | null }
}

export async function registerStudent(
  app: FastifyInstance,
  tenantSlug: string,
  body: Partial<Record<'userLoginId' | 'password' | 'name', string>> & { phone?: string | null } = {},
  extras: RequestExtras = {},
): Promise<StudentRegistration> {
  const payload = { tenantSlug, userLoginId: unique('student'), password: strongPassword(), name: 'Lee Student', ...body }
  const response = await app.inject({ method: 'POST', url: '/v1/register', payload, ...extras })
  return {
    ...authResult(response),
    loginId: payload.userLoginId,
    password: payload.password,
    user: response.statusCode === 201 ? response.json().user : undefined,
  }
}

export async function login(
  app: FastifyInstance,
  body: { userLoginId: string; password: string; customId?: string },
  extras: RequestExtras = {},
): Promise<AuthResult> {
  return authResult(await app.inject({ method: 'POST', url: '/v1/login', payload: body, ...extras }))
}

export async function refresh(app: FastifyInstance, refreshToken: string, extras: RequestExtras = {}): Promise<AuthResult> {
  return authResult(
    await app.inject({ method: 'POST', url: '/v1/refresh', cookies: { svc_refresh_token: refreshToken }, ...extras }),
  )
}

/** A user inserted through the owner connection with a real bcrypt hash, so it can log in. */
export async function insertUserWithPassword(
  tenant: { id: number },
  options: {
    role?: Role
    status?: UserStatus
    loginId?: string
    password?: string
    passwordHash?: string
    cost?: number
    /** A look-alike of an existing id that predates the uniqueness rule (see the identity migration). */
    legacyLoginKeyDuplicate?: boolean
  } = {},
): Promise<UserRow & { password: string }> {
  const password = options.password ?? strongPassword()
  const passwordHash = options.passwordHash ?? (await hashPassword(password, options.cost ?? 4))
  const user = await insertUser(tenant, {
    role: options.role ?? 'STUDENT',
    status: options.status ?? 'ACTIVE',
    passwordHash,
    loginId: options.loginId ?? unique('user'),
    legacyLoginKeyDuplicate: options.legacyLoginKeyDuplicate ?? false,
  })
  return { ...user, password }
}

/** The payload of a JWT, without verifying it. */
export function decodeJwt(token: string): Record<string, unknown> {
  const [, payload] = token.split('.')
  return JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'))
}

/** Signs arbitrary claims as an HS256 JWT (or with another header), for crafting valid and invalid tokens. */
export function signJwt(
  claims: Record<string, unknown>,
  options: { secret?: string; header?: Record<string, unknown> } = {},
): string {
  const header = Buffer.from(JSON.stringify(options.header ?? { alg: 'HS256', typ: 'JWT' })).toString('base64url')
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
  const signature = createHmac('sha256', options.secret ?? TEST_JWT_SECRET).update(`${header}.${payload}`).digest('base64url')
  return `${header}.${payload}.${signature}`
}

/** Asserts that a call of the in-process contract (or any lib call) rejects with the catalog error `code`. */
export async function expectAppError(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  const error = await promise.then(
    () => expect.unreachable(`expected ${code}`),
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AppError)
  expect((error as AppError).code).toBe(code)
  return error as AppError
}

/** Asserts a problem+json answer with the given status and code; returns the parsed problem. */
export function expectProblem(response: Response, status: number, code: ErrorCode): Record<string, unknown> {
  expect({ status: response.statusCode, code: safeJson(response).code }).toEqual({ status, code })
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/)
  const problem = response.json()
  expect(problem).toMatchObject({ type: problemType(code), status, code })
  expect(typeof problem.title).toBe('string')
  expect(typeof problem.detail).toBe('string')
  return problem
}

function safeJson(response: Response): Record<string, unknown> {
  try {
    return response.json()
  } catch {
    return { body: response.body }
  }
}

/** Polls `check` until it holds or the deadline passes. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** An owner signed in through POST /v1/login, as a browser is: both tokens are cookies (CORS and CSRF tests). */
export async function browserSession(app: FastifyInstance) {
  const tenant = await createTenant()
  const user = await insertUserWithPassword(tenant, { role: 'OWNER' })
  const signedIn = await login(
    app,
    { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId },
    { remoteAddress: uniqueAddress() },
  )
  expect(signedIn.response.statusCode).toBe(200)
  return { access: { svc_access_token: signedIn.accessToken }, refresh: { svc_refresh_token: signedIn.refreshToken } }
}
