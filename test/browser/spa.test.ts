import type { Browser, BrowserContext, Page, Request, Response } from 'playwright-core'
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { insertUserWithPassword } from '../support/auth-fixtures.js'
import { createTenant, owner as ownerDb } from '../support/fixtures.js'
import { launchChromium } from './chromium.js'
import { callSpa, describeBrowser, type Answer } from './spa-page.js'
import { startService, type Service } from './service.js'
import { startStaticSite, type StaticSite } from './static-site.js'

/**
 * A real browser against the real service: an SPA on a listed origin works with cookies alone, a page on an unlisted
 * origin is refused by CORS, two tabs refreshing at once stay signed in, and a form on another site cannot change
 * anything even when the cookie rides along.
 *
 * Sites and origins, all on loopback (Chromium treats http://127.0.0.1 and http://localhost as secure contexts, so
 * the service's default `Secure` cookies are kept over plain HTTP):
 *   service            http://127.0.0.1:<port>   one with the default SameSite=Lax, one with SameSite=None
 *   SPA (listed)       http://127.0.0.1:<port>   same site as the service, another origin: CORS decides
 *   other page         http://127.0.0.1:<port>   same site, not listed
 *   attacker           http://localhost:<port>   another site (host names differ; ports never make a site)
 */

type SpaCall = 'login' | 'me' | 'refresh' | 'send' | 'history' | 'message' | 'logout'

const message = (extra: Record<string, unknown> = {}) => ({
  title: 'Notice',
  content: 'Hello {name}',
  recipients: [{ phone: '010-1234-5678', name: 'Kim' }],
  ...extra,
})

async function signInDetails() {
  const tenant = await createTenant()
  const user = await insertUserWithPassword(tenant, { role: 'OWNER' })
  return { user, credentials: { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId } }
}

function call(page: Page, name: SpaCall, ...args: unknown[]): Promise<Answer> {
  return callSpa(page, name, ...args)
}

/** The SPA page served from `origin`, talking to the service at `api`. */
async function openSpa(context: BrowserContext, origin: string, api: string): Promise<Page> {
  const page = await context.newPage()
  await page.goto(`${origin}/spa.html?api=${encodeURIComponent(api)}`)
  return page
}

/** The user's sessions as the database holds them (current JTIs and revocation state). */
const sessionOf = (userId: number) =>
  ownerDb().selectFrom('sessions').select(['sid', 'accessJti', 'refreshJti', 'lastRefreshedAt']).where('userId', '=', userId).execute()

const cookieValue = (header: string | null | undefined, name: string) => new RegExp(`(?:^|[;\\s])${name}=([^;\\s]*)`).exec(header ?? '')?.[1]

describeBrowser('a browser SPA against the service (CORS, cookies, CSRF)', () => {
  let browser: Browser
  let spaSite: StaticSite
  let otherSite: StaticSite
  /** Default cookie settings (SameSite=Lax), dispatching to the mock provider. */
  let lax: Service
  /** The dangerous setting SameSite=None: the cookie rides on cross-site requests and only the CSRF check stands. */
  let none: Service
  let context: BrowserContext

  beforeAll(async () => {
    ;[browser, spaSite, otherSite] = await Promise.all([launchChromium(), startStaticSite(), startStaticSite()])
    const cors = { SVC_CORS_ORIGINS: spaSite.origin() }
    ;[lax, none] = await Promise.all([
      startService({ ...cors, SVC_SMS_DISPATCHER: 'on' }),
      startService({ ...cors, SVC_COOKIE_SAMESITE: 'none' }),
    ])
  })

  afterAll(async () => {
    await Promise.all([browser?.close(), lax?.close(), none?.close(), spaSite?.close(), otherSite?.close()])
  })

  // Every test is a fresh browser profile: its own cookie jar.
  beforeEach(async () => {
    context = await browser.newContext()
  })
  afterEach(() => context?.close())

  it('an SPA on a listed origin signs in, reads /v1/me, refreshes, sends an SMS, reads history and logs out, with cookies alone', async () => {
    const { credentials } = await signInDetails()
    const requests: Request[] = []
    context.on('request', (request) => {
      if (request.url().startsWith(lax.url)) requests.push(request)
    })
    const page = await openSpa(context, spaSite.origin(), lax.url)

    const signedIn = await call(page, 'login', credentials)
    expect(signedIn.status).toBe(200)
    expect(signedIn.body.user).toMatchObject({ userLoginId: credentials.userLoginId, role: 'OWNER' })
    const jar = await context.cookies(lax.url)
    const access = jar.find((cookie) => cookie.name === 'svc_access_token')
    const refresh = jar.find((cookie) => cookie.name === 'svc_refresh_token')
    expect(access).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' })
    expect(refresh).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' })
    // The tokens are nowhere the page can reach: not in the answer, not in document.cookie.
    expect(JSON.stringify(signedIn.body)).not.toContain(access!.value)
    expect(JSON.stringify(signedIn.body)).not.toContain(refresh!.value)
    expect(await page.evaluate('document.cookie')).toBe('')

    const me = await call(page, 'me')
    expect(me.status).toBe(200)
    expect(me.body.userLoginId).toBe(credentials.userLoginId)
    expect(me.requestId).toBeTruthy()

    expect((await call(page, 'refresh')).status).toBe(200)
    const rotated = (await context.cookies(lax.url)).find((cookie) => cookie.name === 'svc_refresh_token')
    expect(rotated?.value).toBeTruthy()
    expect(rotated?.value).not.toBe(refresh!.value)
    expect((await call(page, 'me')).status).toBe(200)

    const key = randomUUID()
    const sent = await call(page, 'send', message(), key)
    expect(sent.status).toBe(201)
    expect(sent.body).toMatchObject({ recipientCount: 1 })
    const replayed = await call(page, 'send', message(), key)
    expect(replayed).toMatchObject({ status: 201, replayed: 'true', body: { id: sent.body.id } })

    const history = await call(page, 'history')
    expect(history.status).toBe(200)
    expect(history.body.items.map((item: { id: number }) => item.id)).toContain(sent.body.id)
    // The mock provider delivers it; the page watches it go out.
    await vi.waitFor(
      async () => {
        const read = await call(page, 'message', sent.body.id)
        expect(read.body?.status).toBe('SENT')
      },
      { timeout: 20_000, interval: 250 },
    )

    expect((await call(page, 'logout')).status).toBe(204)
    const afterLogout = await call(page, 'me')
    expect(afterLogout.status).toBe(401)
    expect(afterLogout.body.code).toBe('AUTH_002')

    const sentHeaders = await Promise.all(requests.map((request) => request.allHeaders()))
    expect(sentHeaders.filter((headers) => headers.authorization !== undefined)).toEqual([])
    expect(sentHeaders.some((headers) => cookieValue(headers.cookie, 'svc_access_token'))).toBe(true)
  })

  it('a page on an unlisted origin is refused by the browser, and cannot sign out or refresh the signed-in session', async () => {
    const { credentials, user } = await signInDetails()
    const listed = await openSpa(context, spaSite.origin(), lax.url)
    expect((await call(listed, 'login', credentials)).status).toBe(200)

    // Same site as the service (the cookies ride), another origin, not listed: no CORS, so nothing is readable.
    const unlisted = await openSpa(context, otherSite.origin(), lax.url)
    for (const name of ['me', 'history', 'refresh', 'logout'] as const) {
      expect(await call(unlisted, name), name).toEqual({ failed: expect.stringMatching(/TypeError/) })
    }
    // A JSON login needs a preflight, which is refused: the login itself is never sent.
    expect(await call(unlisted, 'login', credentials)).toEqual({ failed: expect.stringMatching(/TypeError/) })

    // What the service answered, unseen by the page: the refresh and logout (simple requests, so sent with the
    // cookies) were refused by the CSRF check, and the session goes on.
    const answered = lax.answered.filter((answer) => answer.origin === otherSite.origin()).map((answer) => `${answer.request} ${answer.status}`)
    expect(answered).toEqual([
      'GET /v1/me 200',
      'GET /v1/sms/history 200',
      'POST /v1/refresh 403',
      'POST /v1/logout 403',
      'OPTIONS /v1/login 404',
    ])
    expect(await sessionOf(user.id)).toHaveLength(1)
    expect((await call(listed, 'me')).status).toBe(200)
    expect((await call(listed, 'refresh')).status).toBe(200)
  })

  it('two tabs refreshing at once both stay signed in (the refresh reuse grace)', async () => {
    const { credentials } = await signInDetails()
    const first = await openSpa(context, spaSite.origin(), lax.url)
    expect((await call(first, 'login', credentials)).status).toBe(200)
    const second = await openSpa(context, spaSite.origin(), lax.url)
    expect((await call(second, 'me')).status).toBe(200)

    const answers: Response[] = []
    context.on('response', (response) => {
      if (response.url() === `${lax.url}/v1/refresh`) answers.push(response)
    })
    lax.refreshGate.arm(2)
    const [one, two] = await Promise.all([call(first, 'refresh'), call(second, 'refresh')])
    expect([one.status, two.status]).toEqual([200, 200])

    await vi.waitFor(() => expect(answers).toHaveLength(2))
    const presented = await Promise.all(answers.map(async (answer) => cookieValue((await answer.request().allHeaders()).cookie, 'svc_refresh_token')))
    const issued = await Promise.all(answers.map(async (answer) => cookieValue(await answer.headerValue('set-cookie'), 'svc_refresh_token')))
    // Both tabs presented the same token; one rotated it, the other got the same new pair back within the grace.
    expect(presented[0]).toBeTruthy()
    expect(presented[1]).toBe(presented[0])
    expect(issued[0]).toBeTruthy()
    expect(issued[1]).toBe(issued[0])

    expect((await call(first, 'me')).status).toBe(200)
    expect((await call(second, 'me')).status).toBe(200)
    expect((await call(second, 'refresh')).status).toBe(200)
    expect((await call(first, 'me')).status).toBe(200)
  })

  /**
   * A bodiless no-cors fetch from the other site would get past the 415 as well, but a fresh Chromium profile does not
   * attach cookies to cross-site subresource requests (third-party cookies), so only navigations carry them here;
   * that variant is played without a browser in test/platform/csrf.test.ts.
   */
  describe('a form on another site posting at the service', () => {
    /** Opens the attacker's page on localhost (another site than 127.0.0.1) and submits its form at `target`. */
    async function submitCrossSite(target: string): Promise<Response> {
      const attacker = await context.newPage()
      await attacker.goto(`${otherSite.origin('localhost')}/attack.html?target=${encodeURIComponent(target)}`)
      const [answer] = await Promise.all([attacker.waitForResponse(target), attacker.evaluate('document.forms[0].submit()')])
      return answer
    }

    it('with SVC_COOKIE_SAMESITE=none the cookie rides, the service answers 403 CSRF_ORIGIN_REJECTED and nothing changes', async () => {
      const { credentials, user } = await signInDetails()
      const spa = await openSpa(context, spaSite.origin(), none.url)
      expect((await call(spa, 'login', credentials)).status).toBe(200)
      expect((await context.cookies(none.url)).map((cookie) => [cookie.name, cookie.sameSite, cookie.secure])).toEqual(
        expect.arrayContaining([
          ['svc_access_token', 'None', true],
          ['svc_refresh_token', 'None', true],
        ]),
      )
      const scheduled = await call(spa, 'send', message({ scheduledAt: new Date(Date.now() + 3_600_000).toISOString() }), randomUUID())
      expect(scheduled.status).toBe(201)

      const sessionBefore = await sessionOf(user.id)

      // /v1/refresh reads no body, so without the CSRF check this form would rotate the pair; the JSON routes would
      // answer 415 to a form body, but the check refuses first, whatever the body.
      for (const [path, cookie] of [
        ['/v1/logout-all', 'svc_access_token'],
        [`/v1/sms/history/${scheduled.body.id}/cancel`, 'svc_access_token'],
        ['/v1/refresh', 'svc_refresh_token'],
      ] as const) {
        const answer = await submitCrossSite(`${none.url}${path}`)
        expect(cookieValue((await answer.request().allHeaders()).cookie, cookie), `${cookie} rode on ${path}`).toBeTruthy()
        expect([answer.status(), (await answer.json()).code], path).toEqual([403, 'CSRF_ORIGIN_REJECTED'])
      }

      expect(await sessionOf(user.id)).toEqual(sessionBefore)
      expect((await call(spa, 'me')).status).toBe(200)
      const stillScheduled = await call(spa, 'message', scheduled.body.id)
      expect(stillScheduled.body).toMatchObject({ status: 'PENDING', cancelledAt: null })
    })

    it('with the default SameSite=Lax the cookie does not ride at all: the form is not signed in (401 AUTH_002)', async () => {
      const { credentials } = await signInDetails()
      const spa = await openSpa(context, spaSite.origin(), lax.url)
      expect((await call(spa, 'login', credentials)).status).toBe(200)

      const answer = await submitCrossSite(`${lax.url}/v1/logout-all`)
      expect(cookieValue((await answer.request().allHeaders()).cookie, 'svc_access_token')).toBeUndefined()
      expect([answer.status(), (await answer.json()).code]).toEqual([401, 'AUTH_002'])
      expect((await call(spa, 'me')).status).toBe(200)
    })
  })
})
