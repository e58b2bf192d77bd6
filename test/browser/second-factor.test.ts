import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { MFA_COOKIE } from '../../lib/account-security/second-factor/mfa-token.js'
import { totpCode } from '../../lib/account-security/second-factor/totp.js'
import { useProviderTestBed } from '../dispatch/dispatch-test-bed.js'
import { enrolTotp, mfaCall } from '../account-security/second-factor/mfa-bed.js'
import { bearerFor, codeIn, createAcademy, insertMember, SYSTEM_SENDER, type Academy, type Member } from '../account-security/recovery-bed.js'
import { launchChromium } from './chromium.js'
import { callSpa, describeBrowser, type Answer } from './spa-page.js'
import { smsTo, startServiceSendingTo, type Service } from './service.js'
import { startStaticSite, type StaticSite } from './static-site.js'

/**
 * A sign-in with a second factor in a real browser: an SPA on a listed origin (site/second-factor.html, spa.js plus
 * the second step's calls) sends the password, gets `mfaRequired`, and completes the sign-in with a TOTP code or an
 * SMS code, with cookies alone. Between the two steps the attempt lives in the service's svc_mfa_token cookie, which
 * no script of the page can read.
 *
 * The service runs its own dispatcher, as in production (the SMS code goes out after /v1/login/mfa/sms has answered),
 * so it works on a database of its own, like recovery.test.ts: dispatch claims due messages of every tenant.
 * Factors are enrolled through the API beforehand (a bearer token, test/account-security/second-factor/mfa-bed.ts).
 */

type SpaCall = 'login' | 'me' | 'sendLoginCode' | 'completeLogin'

function call(page: Page, name: SpaCall, ...args: unknown[]): Promise<Answer> {
  return callSpa(page, name, ...args)
}

/** Six digits the service takes from no step of `secret` now (one step of drift either way, and the next step). */
function notLive(secret: string): string {
  const live = new Set([-1, 0, 1, 2].map((step) => totpCode(secret, Date.now() + step * 30_000)))
  return ['000000', '111111', '222222', '333333', '444444'].find((candidate) => !live.has(candidate))!
}

describeBrowser('a browser SPA signing in with a second factor (cookies only)', () => {
  const provider = useProviderTestBed()
  let browser: Browser
  let site: StaticSite
  let service: Service
  let context: BrowserContext
  let requests: Request[]

  beforeAll(async () => {
    ;[browser, site] = await Promise.all([launchChromium(), startStaticSite()])
    service = await startServiceSendingTo(provider, site, SYSTEM_SENDER, 'browser-second-factor-webhook')
  })

  // Registered after the provider bed's hooks, so these run first: the service stops before its database goes.
  afterAll(async () => {
    await Promise.all([browser?.close(), service?.close(), site?.close()])
  })

  // Every test is a fresh browser profile: its own cookie jar.
  beforeEach(async () => {
    context = await browser.newContext()
    requests = []
    context.on('request', (request) => {
      if (request.url().startsWith(service.url)) requests.push(request)
    })
  })
  afterEach(async () => {
    await context?.close()
  })

  async function openSpa(): Promise<Page> {
    const page = await context.newPage()
    await page.goto(`${site.origin()}/second-factor.html?api=${encodeURIComponent(service.url)}`)
    return page
  }

  const signIn = (tenant: Academy, member: Member) => ({ userLoginId: member.userLoginId, password: member.password, customId: tenant.customId })

  /** The browser's whole jar, by name: the service's cookies, whatever their path (the mfa cookie's is /v1/login). */
  async function jar() {
    return new Map((await context.cookies()).map((cookie) => [cookie.name, cookie]))
  }

  /**
   * What a script reads in `document.cookie` on the SPA's host at a path under /v1/login, where the mfa cookie is in
   * scope (cookies ignore ports, so the service's cookies are the host's). The SPA's own page, at /, is outside the
   * cookie's path and would not show it even if it were readable; this page is inside. A cookie the test puts there
   * without HttpOnly shows that such a page does read what it may.
   */
  async function readableUnderLoginPath(): Promise<string> {
    const url = `${site.origin()}/v1/login/probe`
    await context.addCookies([{ name: 'svc_probe', value: 'readable', domain: '127.0.0.1', path: '/v1/login' }])
    const probe = await context.newPage()
    try {
      await probe.route(url, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>probe</title>' }))
      await probe.goto(url)
      return (await probe.evaluate('document.cookie')) as string
    } finally {
      await probe.close()
      await context.clearCookies({ name: 'svc_probe' })
    }
  }

  /** Cookies alone: the SPA's page reads no token, and no request it made carried an Authorization header. */
  async function expectCookiesOnly(page: Page) {
    expect(await page.evaluate('document.cookie')).toBe('')
    const sentHeaders = await Promise.all(requests.map((request) => request.allHeaders()))
    expect(sentHeaders.length).toBeGreaterThan(0)
    expect(sentHeaders.filter((headers) => headers.authorization !== undefined)).toEqual([])
  }

  it('a user with an authenticator app: the password step leaves an HttpOnly mfa cookie, a wrong code is refused, the right one signs in', async () => {
    const tenant = await createAcademy(provider.iso.owner)
    const member = await insertMember(provider.iso.owner, tenant, { role: 'OWNER' })
    const { secret } = await enrolTotp(service.app, await bearerFor(service.app, member, tenant, 'OWNER'), member.password)
    const page = await openSpa()

    const first = await call(page, 'login', signIn(tenant, member))
    expect([first.status, first.body]).toEqual([200, { mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'], expiresIn: 300 }])
    const afterPassword = await jar()
    expect([...afterPassword.keys()]).toEqual([MFA_COOKIE])
    expect(afterPassword.get(MFA_COOKIE)).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/v1/login' })
    expect(await page.evaluate('document.cookie')).toBe('')
    expect(await readableUnderLoginPath()).toBe('svc_probe=readable')
    // The mfa cookie is no session, and not even sent outside /v1/login.
    const early = await call(page, 'me')
    expect([early.status, early.body?.code]).toEqual([401, 'AUTH_002'])

    // The confirmation used the current step; the app's next code is one step later, within the allowed drift.
    const code = totpCode(secret, Date.now() + 30_000)
    const wrong = await call(page, 'completeLogin', { method: 'TOTP', code: notLive(secret) })
    expect([wrong.status, wrong.body?.code]).toEqual([401, 'MFA_CODE_INVALID'])
    expect([...(await jar()).keys()]).toEqual([MFA_COOKIE])

    const done = await call(page, 'completeLogin', { method: 'TOTP', code })
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body.user).toMatchObject({ id: member.id, userLoginId: member.userLoginId, tenantSlug: tenant.slug })
    const signedIn = await jar()
    expect([...signedIn.keys()].sort()).toEqual(['svc_access_token', 'svc_refresh_token'])
    expect(signedIn.get('svc_access_token')).toMatchObject({ httpOnly: true, path: '/' })

    const me = await call(page, 'me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: member.id, userLoginId: member.userLoginId, role: 'OWNER' })
    // The attempt is spent: its cookie is gone from the jar, and the same code cannot complete another step.
    const replay = await call(page, 'completeLogin', { method: 'TOTP', code })
    expect([replay.status, replay.body?.code]).toEqual([401, 'MFA_TOKEN_INVALID'])
    await expectCookiesOnly(page)
  })

  it('a user with codes by SMS: the page asks for a code, the phone receives it, the page completes the sign-in', async () => {
    const tenant = await createAcademy(provider.iso.owner)
    // insertMember stores the phone verified, which the SMS factor needs.
    const member = await insertMember(provider.iso.owner, tenant, { role: 'MANAGER' })
    const enabled = await mfaCall(service.app, await bearerFor(service.app, member, tenant, 'MANAGER'), '/sms', { password: member.password })
    expect(enabled.statusCode, enabled.body).toBe(204)
    const page = await openSpa()

    const first = await call(page, 'login', signIn(tenant, member))
    expect([first.status, first.body]).toEqual([200, { mfaRequired: true, methods: ['SMS'], expiresIn: 300 }])
    expect([...(await jar()).keys()]).toEqual([MFA_COOKIE])

    const sent = await call(page, 'sendLoginCode')
    expect([sent.status, sent.body]).toEqual([202, { expiresIn: 300, resendAfter: 60 }])
    const sms = await smsTo(provider.fake, member.phone!)
    expect(sms).toMatchObject({ from: SYSTEM_SENDER, type: 'SMS' })
    expect(sms.text).toContain(tenant.name)

    const done = await call(page, 'completeLogin', { method: 'SMS', code: codeIn(sms.text) })
    expect(done.status, JSON.stringify(done.body)).toBe(200)
    expect(done.body.user).toMatchObject({ id: member.id, userLoginId: member.userLoginId })
    expect([...(await jar()).keys()].sort()).toEqual(['svc_access_token', 'svc_refresh_token'])
    const me = await call(page, 'me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: member.id, role: 'MANAGER' })
    await expectCookiesOnly(page)
  })
})
