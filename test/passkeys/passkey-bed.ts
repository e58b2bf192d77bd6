import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { insertUserWithPassword, login, uniqueAddress, type Response } from '../support/auth-fixtures.js'
import { createTenant, type TenantRow } from '../support/fixtures.js'
import { SoftAuthenticator, type CeremonyTweaks, type PasskeyAlgorithm } from '../support/passkey-authenticator.js'

/** The relying party of the passkey tests: a site and the page origin that runs the ceremonies. */
export const RP_ID = 'academy.example'
export const ORIGIN = 'https://app.academy.example'
export const PASSKEY_ENV = { SVC_WEBAUTHN_RP_ID: RP_ID, SVC_WEBAUTHN_ORIGINS: `${ORIGIN},https://m.academy.example` }

export interface SignedInUser {
  tenant: TenantRow
  user: { id: number; userLoginId: string; password: string }
  cookies: Record<string, string>
  address: string
}

/** A user of a fresh tenant (or of `tenant`), signed in by password as a browser is: both tokens are cookies. */
export async function signedInUser(app: FastifyInstance, options: { tenant?: TenantRow; role?: 'OWNER' | 'MANAGER' | 'STUDENT' } = {}): Promise<SignedInUser> {
  const tenant = options.tenant ?? (await createTenant())
  const user = await insertUserWithPassword(tenant, { role: options.role ?? 'OWNER' })
  const address = uniqueAddress()
  const signedIn = await login(app, { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId }, { remoteAddress: address })
  expect(signedIn.response.statusCode).toBe(200)
  return {
    tenant,
    user: { id: user.id, userLoginId: user.userLoginId, password: user.password },
    cookies: { svc_access_token: signedIn.accessToken, svc_refresh_token: signedIn.refreshToken },
    address,
  }
}

export function creationOptions(app: FastifyInstance, who: SignedInUser): Promise<Response> {
  return app.inject({ method: 'POST', url: '/v1/me/passkeys/options', cookies: who.cookies, remoteAddress: who.address })
}

export function postPasskey(app: FastifyInstance, who: SignedInUser, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return app.inject({ method: 'POST', url: '/v1/me/passkeys', cookies: who.cookies, remoteAddress: who.address, payload: body, headers })
}

/** The whole enrolment: options, the authenticator's response, the password. Returns the authenticator and the answer. */
export async function enrol(
  app: FastifyInstance,
  who: SignedInUser,
  options: { algorithm?: PasskeyAlgorithm; tweaks?: CeremonyTweaks; name?: string; counter?: number } = {},
): Promise<{ authenticator: SoftAuthenticator; response: Response }> {
  const authenticator = new SoftAuthenticator(options.algorithm ?? 'ES256', ORIGIN, RP_ID, { counter: options.counter ?? 0 })
  const asked = await creationOptions(app, who)
  expect(asked.statusCode).toBe(200)
  const response = await postPasskey(app, who, {
    password: who.user.password,
    response: authenticator.create(asked.json(), options.tweaks),
    ...(options.name ? { name: options.name } : {}),
  })
  return { authenticator, response }
}

export function signInOptions(app: FastifyInstance, address = uniqueAddress()): Promise<Response> {
  return app.inject({ method: 'POST', url: '/v1/login/passkey/options', remoteAddress: address })
}

export function postAssertion(app: FastifyInstance, body: Record<string, unknown>, extras: { headers?: Record<string, string>; address?: string } = {}): Promise<Response> {
  return app.inject({ method: 'POST', url: '/v1/login/passkey', payload: body, headers: extras.headers ?? {}, remoteAddress: extras.address ?? uniqueAddress() })
}

/** The whole sign-in: options, the assertion, the answer. */
export async function signInWith(
  app: FastifyInstance,
  authenticator: SoftAuthenticator,
  tweaks: CeremonyTweaks = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  const asked = await signInOptions(app)
  expect(asked.statusCode).toBe(200)
  const options = asked.json()
  return postAssertion(app, { challengeId: options.challengeId, response: authenticator.get(options, tweaks) }, { headers })
}
