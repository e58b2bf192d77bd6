import createClient from 'openapi-fetch'
// Generated from GET /openapi.json by test/openapi/generated-client.test.ts, next to a copy of this file; this file
// is therefore left out of the project's own type-check (tsconfig.json) and checked there instead.
import type { components, paths } from './openapi.js'

/**
 * README "Try it" as a client written against the generated types would write it: register, sign in, read the
 * user, send (twice with one Idempotency-Key), list and read the history. The type-level lines below hold the
 * document to what a client relies on; a change to the document that breaks them fails to compile.
 */

type Schemas = components['schemas']
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const assertType = <Check extends true>(): Check | undefined => undefined

// Enums, not strings.
assertType<Same<Schemas['SmsStatus'], 'PENDING' | 'DISPATCHED' | 'SENT' | 'FAILED' | 'PARTIAL' | 'CANCELLED'>>()
assertType<Same<Schemas['Role'], 'OWNER' | 'MANAGER' | 'INSTRUCTOR' | 'STUDENT'>>()
assertType<Same<Schemas['DeviceCategory'], 'WEB' | 'MOBILE' | 'TABLET' | 'DESKTOP'>>()
assertType<Same<Schemas['DeliveryStatus'], 'PENDING' | 'DISPATCHED' | 'DELIVERED' | 'FAILED' | 'CANCELLED' | null>>()
assertType<Same<Schemas['SmsMessage']['status'], Schemas['SmsStatus']>>()
assertType<Same<Schemas['Problem']['code'], Schemas['ProblemCode']>>()

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

/** The tokens travel only in cookies; a client without a cookie jar sends the access token as a bearer. */
function accessToken(response: Response): string {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith('svc_access_token='))
  const token = cookie?.slice('svc_access_token='.length).split(';', 1)[0]
  if (!token) throw new Error('no svc_access_token cookie in the login answer')
  return token
}

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
