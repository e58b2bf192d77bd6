import createClient from 'openapi-fetch'
// Generated from GET /openapi.json by test/openapi/generated-client.test.ts, next to a copy of this file; this file
// is therefore left out of the project's own type-check (tsconfig.json) and checked there instead.
import type { components, paths } from './openapi.js'

/**
 * README "Try it" as a client written against the generated types would write it: register, sign in, read the
 * user, send (twice with one Idempotency-Key), list and read the history; then a sign-in with a second factor:
 * enrol an authenticator app, sign in (the password step answers mfaRequired), complete it with a TOTP code. The
 * type-level lines below hold the document to what a client relies on; a change to the document that breaks them
 * fails to compile.
 */

type Schemas = components['schemas']
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const assertType = <Check extends true>(): Check | undefined => undefined

// Enums, not strings.
assertType<Same<Schemas['SmsStatus'], 'PENDING' | 'DISPATCHED' | 'SENT' | 'FAILED' | 'PARTIAL' | 'CANCELLED'>>()
assertType<Same<Schemas['Role'], 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT'>>()
assertType<Same<Schemas['DeviceCategory'], 'WEB' | 'MOBILE' | 'TABLET' | 'DESKTOP'>>()
assertType<Same<Schemas['DeliveryStatus'], 'PENDING' | 'DISPATCHED' | 'DELIVERED' | 'FAILED' | 'CANCELLED' | 'OPTED_OUT' | 'NO_CONSENT' | null>>()
assertType<Same<Schemas['SmsMessage']['purpose'], 'INFORMATIONAL' | 'ADVERTISEMENT'>>()
assertType<Same<Schemas['SmsMessage']['status'], Schemas['SmsStatus']>>()
assertType<Same<Schemas['Problem']['code'], Schemas['ProblemCode']>>()
// The password step answers a session or the second step's challenge; `'mfaRequired' in data` tells them apart.
type LoginAnswer = paths['/v1/login']['post']['responses'][200]['content']['application/json']
assertType<Same<LoginAnswer, Schemas['LoginResponse'] | Schemas['MfaRequiredResponse']>>()
assertType<Same<Extract<LoginAnswer, { mfaRequired: true }>, Schemas['MfaRequiredResponse']>>()
assertType<Same<Schemas['MfaRequiredResponse']['methods'][number], 'TOTP' | 'SMS' | 'RECOVERY_CODE'>>()
assertType<Same<paths['/v1/login/mfa']['post']['requestBody']['content']['application/json']['method'], 'TOTP' | 'SMS' | 'RECOVERY_CODE'>>()

export interface OwnerSignUp {
  instituteName: string
  businessRegistrationNumber: string
  userLoginId: string
  password: string
  name: string
}

export interface TryItResult {
  me: Schemas['User']
  sent: Schemas['SmsMessage']
  replayed: { id: number; header: string | null }
  history: Schemas['SmsMessagePage']
  detail: Schemas['SmsMessage']
  /** What reading a message that does not exist answers. */
  missingCode: Schemas['ProblemCode']
}

/** A cookie's value in an answer's `Set-Cookie` headers. */
function setCookie(response: Response, name: string): string {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith(`${name}=`))
  const value = cookie?.slice(name.length + 1).split(';', 1)[0]
  if (!value) throw new Error(`no ${name} cookie in the answer`)
  return value
}

/** The tokens travel only in cookies; a client without a cookie jar sends the access token as a bearer. */
const accessToken = (response: Response) => setCookie(response, 'svc_access_token')

function failed(step: string, error: { code: string; detail: string } | undefined): Error {
  return new Error(`${step}: ${error ? `${error.code} ${error.detail}` : 'no body'}`)
}

export async function tryIt(baseUrl: string, owner: OwnerSignUp, idempotencyKey: string): Promise<TryItResult> {
  const client = createClient<paths>({ baseUrl })

  const registered = await client.POST('/v1/register/owner', { body: owner, params: { header: { 'X-Device-Category': 'DESKTOP' } } })
  if (!registered.data) throw failed('register', registered.error)

  const signedIn = await client.POST('/v1/login', {
    body: { userLoginId: owner.userLoginId, password: owner.password, customId: registered.data.user.tenantCustomId },
  })
  if (!signedIn.data) throw failed('login', signedIn.error)
  if ('mfaRequired' in signedIn.data) throw new Error('login: a new owner has no second factor')
  const headers = { Authorization: `Bearer ${accessToken(signedIn.response)}` }

  const me = await client.GET('/v1/me', { headers })
  if (!me.data) throw failed('me', me.error)

  const message = { title: 'Hello', content: 'Hello {name}', recipients: [{ phone: '010-1234-5678', name: 'Kim' }] }
  // @ts-expect-error The server refuses a send without an Idempotency-Key, so the generated types require one.
  void (() => client.POST('/v1/sms/send', { headers, body: message }))
  const send = () => client.POST('/v1/sms/send', { headers, params: { header: { 'Idempotency-Key': idempotencyKey } }, body: message })
  const sent = await send()
  if (!sent.data) throw failed('send', sent.error)
  const again = await send()
  if (!again.data) throw failed('send again', again.error)

  // page, size and sort have defaults: a client may leave any of them out.
  const history = await client.GET('/v1/sms/history', { headers, params: { query: { size: 5 } } })
  if (!history.data) throw failed('history', history.error)

  const detail = await client.GET('/v1/sms/history/{id}', { headers, params: { path: { id: sent.data.id } } })
  if (!detail.data) throw failed('history/{id}', detail.error)

  const missing = await client.GET('/v1/sms/history/{id}', { headers, params: { path: { id: Number.MAX_SAFE_INTEGER } } })
  if (!missing.error) throw new Error('a message that does not exist was found')
  // The error's code is the union of the codes this operation lists, not the whole catalog.
  const listed: typeof missing.error.code = 'SMS_NOT_FOUND'
  // @ts-expect-error AUTH_001 (a failed sign-in) is not a code reading a message can answer.
  const notListed: typeof missing.error.code = 'AUTH_001'
  void [listed, notListed]

  return {
    me: me.data,
    sent: sent.data,
    replayed: { id: again.data.id, header: again.response.headers.get('Idempotent-Replayed') },
    history: history.data,
    detail: detail.data,
    missingCode: missing.error.code,
  }
}

/** The authenticator app: the TOTP code of `secret` at `at` (milliseconds, now by default). */
export type Authenticator = (secret: string, at?: number) => string

export interface SecondFactorResult {
  enrolment: Schemas['TotpEnrolment']
  recoveryCodes: string[]
  factors: Schemas['MfaStatus']
  challenge: Schemas['MfaRequiredResponse']
  /** What the second step answers to a wrong code. */
  wrongCode: Schemas['ProblemCode']
  session: Schemas['LoginResponse']
  me: Schemas['User']
}

/**
 * A sign-in with a second factor: a new owner enrols an authenticator app (start with the password, confirm with the
 * app's code: the recovery codes), then signs in. The password step answers mfaRequired and the svc_mfa_token cookie;
 * a client without a cookie jar sends that cookie back itself, with the app's code, to POST /v1/login/mfa, whose
 * answer opens the session like a one-step login.
 */
export async function signInWithTotp(baseUrl: string, owner: OwnerSignUp, authenticator: Authenticator): Promise<SecondFactorResult> {
  const client = createClient<paths>({ baseUrl })

  const registered = await client.POST('/v1/register/owner', { body: owner })
  if (!registered.data) throw failed('register', registered.error)
  const headers = { Authorization: `Bearer ${accessToken(registered.response)}` }

  const started = await client.POST('/v1/me/mfa/totp', { headers, body: { password: owner.password } })
  if (!started.data) throw failed('startTotp', started.error)
  const { secret } = started.data
  const confirmed = await client.POST('/v1/me/mfa/totp/confirm', { headers, body: { code: authenticator(secret) } })
  if (!confirmed.data) throw failed('confirmTotp', confirmed.error)
  const factors = await client.GET('/v1/me/mfa', { headers })
  if (!factors.data) throw failed('getMfa', factors.error)

  const credentials = { userLoginId: owner.userLoginId, password: owner.password, customId: registered.data.user.tenantCustomId }
  const passwordStep = await client.POST('/v1/login', { body: credentials })
  if (!passwordStep.data) throw failed('login', passwordStep.error)
  if (!('mfaRequired' in passwordStep.data)) throw new Error('login: opened a session without the second factor')
  const challenge = passwordStep.data
  const mfaCookie = { Cookie: `svc_mfa_token=${setCookie(passwordStep.response, 'svc_mfa_token')}` }

  // @ts-expect-error The second step takes TOTP, SMS or RECOVERY_CODE only.
  void (() => client.POST('/v1/login/mfa', { headers: mfaCookie, body: { method: 'EMAIL', code: '042917' } }))
  // The confirmation used the app's current step, which is taken once; the next step's code is within the drift.
  const code = authenticator(secret, Date.now() + 30_000)
  // Five candidates, at most four of them codes the service could take now (one step of drift): one is surely wrong.
  const live = new Set([-1, 0, 1, 2].map((step) => authenticator(secret, Date.now() + step * 30_000)))
  const wrongCode = ['000000', '111111', '222222', '333333', '444444'].find((candidate) => !live.has(candidate))!
  const wrong = await client.POST('/v1/login/mfa', { headers: mfaCookie, body: { method: 'TOTP', code: wrongCode } })
  if (!wrong.error) throw new Error('a wrong code opened a session')
  const completed = await client.POST('/v1/login/mfa', { headers: mfaCookie, body: { method: 'TOTP', code } })
  if (!completed.data) throw failed('completeLogin', completed.error)

  const me = await client.GET('/v1/me', { headers: { Authorization: `Bearer ${accessToken(completed.response)}` } })
  if (!me.data) throw failed('me', me.error)

  return {
    enrolment: started.data,
    recoveryCodes: confirmed.data.recoveryCodes,
    factors: factors.data,
    challenge,
    wrongCode: wrong.error.code,
    session: completed.data,
    me: me.data,
  }
}
