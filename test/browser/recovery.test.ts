import type { Browser, BrowserContext, Page, Request } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { strongPassword } from '../support/auth-fixtures.js'
import { useProviderTestBed } from '../dispatch/dispatch-test-bed.js'
import { codeIn, createAcademy, insertMember, otherCode, SYSTEM_SENDER } from '../account-security/recovery-bed.js'
import { launchChromium } from './chromium.js'
import { callSpa, describeBrowser, type Answer } from './spa-page.js'
import { smsTo, startServiceSendingTo, type Service } from './service.js'
import { startStaticSite, type StaticSite } from './static-site.js'

/**
 * Self-service password recovery in a real browser: an SPA on a listed origin (site/recovery.html, spa.js plus the
 * recovery calls) asks for a code, the service sends it by SMS to the loopback fake of the live provider, the user
 * types it into the page, resets, and signs in with the new password, all with cookies alone. The session the
 * browser held before the reset ends with it.
 *
 * The service runs its own dispatcher, as in production (the code goes out after forgot has answered, kicked by
 * that work), so it works on a database of its own: dispatch claims due messages of every tenant, and another
 * file's service dispatching on the project's database must neither take this file's code nor hand its messages
 * to this file's fake.
 */

type SpaCall = 'login' | 'me' | 'refresh' | 'forgot' | 'reset'

function call(page: Page, name: SpaCall, ...args: unknown[]): Promise<Answer> {
  return callSpa(page, name, ...args)
}

describeBrowser('a browser SPA recovering a forgotten password (cookies only)', () => {
  const provider = useProviderTestBed()
  let browser: Browser
  let site: StaticSite
  let service: Service
  let context: BrowserContext

  beforeAll(async () => {
    ;[browser, site] = await Promise.all([launchChromium(), startStaticSite()])
    service = await startServiceSendingTo(provider, site, SYSTEM_SENDER, 'browser-recovery-webhook')
    context = await browser.newContext()
  })

  // Registered after the provider bed's hooks, so these run first: the service stops before its database goes.
  afterAll(async () => {
    await context?.close()
    await Promise.all([browser?.close(), service?.close(), site?.close()])
  })

  const accessCookie = async () => (await context.cookies(service.url)).find((cookie) => cookie.name === 'svc_access_token')?.value

  it('a user asks for a code, reads it by SMS, resets, and signs in with the new password; the earlier session ends', async () => {
    const tenant = await createAcademy(provider.iso.owner)
    const member = await insertMember(provider.iso.owner, tenant)
    const account = { userLoginId: member.userLoginId, customId: tenant.customId }
    const requests: Request[] = []
    context.on('request', (request) => {
      if (request.url().startsWith(service.url)) requests.push(request)
    })
    const page = await context.newPage()
    await page.goto(`${site.origin()}/recovery.html?api=${encodeURIComponent(service.url)}`)

    // Signed in earlier, in this browser, with the password about to be forgotten.
    expect((await call(page, 'login', { ...account, password: member.password })).status).toBe(200)
    expect((await call(page, 'me')).status).toBe(200)
    const earlierAccess = await accessCookie()
    expect(earlierAccess).toBeTruthy()

    expect(await call(page, 'forgot', account)).toEqual({ status: 202, body: { expiresIn: 300 }, requestId: expect.any(String), replayed: null })
    const sms = await smsTo(provider.fake, member.phone!)
    expect(sms).toMatchObject({ from: SYSTEM_SENDER, type: 'SMS' })
    expect(sms.text).toContain(tenant.name)
    const code = codeIn(sms.text)

    // A mistyped code: refused, readable by the page (the problem carries the CORS headers too), and nothing changed.
    const newPassword = strongPassword()
    const mistyped = await call(page, 'reset', { ...account, code: otherCode(code), newPassword })
    expect([mistyped.status, mistyped.body?.code]).toEqual([400, 'OTP_INVALID'])
    expect((await call(page, 'me')).status).toBe(200)

    const reset = await call(page, 'reset', { ...account, code, newPassword })
    expect([reset.status, reset.body]).toEqual([204, null])

    // The earlier session's cookies are still in the jar and still sent, and no longer sign anyone in.
    expect(await accessCookie()).toBe(earlierAccess)
    const earlier = await call(page, 'me')
    expect([earlier.status, earlier.body?.code]).toEqual([401, 'AUTH_004'])
    const earlierRefresh = await call(page, 'refresh')
    expect([earlierRefresh.status, earlierRefresh.body?.code]).toEqual([401, 'AUTH_007'])

    const oldPassword = await call(page, 'login', { ...account, password: member.password })
    expect([oldPassword.status, oldPassword.body?.code]).toEqual([401, 'AUTH_001'])
    const signedIn = await call(page, 'login', { ...account, password: newPassword })
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.user).toMatchObject({ id: member.id, userLoginId: member.userLoginId })
    expect(await accessCookie()).not.toBe(earlierAccess)
    const me = await call(page, 'me')
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: member.id, userLoginId: member.userLoginId, phoneVerifiedAt: expect.any(String) })

    // Cookies alone: the page can read no token and sent no Authorization header.
    expect(await page.evaluate('document.cookie')).toBe('')
    const sentHeaders = await Promise.all(requests.map((request) => request.allHeaders()))
    expect(sentHeaders.length).toBeGreaterThan(0)
    expect(sentHeaders.filter((headers) => headers.authorization !== undefined)).toEqual([])
  })
})
