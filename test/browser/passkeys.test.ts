import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { insertUserWithPassword } from '../support/auth-fixtures.js'
import { createTenant, owner } from '../support/fixtures.js'
import { launchChromium } from './chromium.js'
import { callSpa, describeBrowser, type Answer } from './spa-page.js'
import { startService, type Service } from './service.js'
import { startStaticSite, type StaticSite } from './static-site.js'

/**
 * Passkeys in a real browser: Chromium's DevTools virtual authenticator (CTAP2, internal transport, resident keys,
 * user verification) stands for the device's own lock. An SPA (site/passkeys.html) signs in with a password, enrols
 * a passkey through navigator.credentials.create, forgets its cookies, and signs in again through
 * navigator.credentials.get with the passkey alone; every call is a credentialed fetch, so cookies are all it has.
 *
 * WebAuthn needs a host name for the RP ID (an IP address is refused) and a secure context: the page and the service
 * are both on http://localhost (one site; ports never make a site), so the SameSite=Lax cookies travel.
 */
type SpaCall = 'login' | 'me' | 'enrolPasskey' | 'signInWithPasskey' | 'passkeys' | 'removePasskey'

const call = (page: Page, name: SpaCall, ...args: unknown[]): Promise<Answer> => callSpa(page, name, ...args)

describeBrowser('a browser enrolling a passkey and signing in with it (virtual authenticator, cookies only)', () => {
  let browser: Browser
  let site: StaticSite
  let service: Service
  let api: string
  let context: BrowserContext

  beforeAll(async () => {
    ;[browser, site] = await Promise.all([launchChromium(), startStaticSite()])
    service = await startService({
      SVC_CORS_ORIGINS: site.origin('localhost'),
      SVC_WEBAUTHN_RP_ID: 'localhost',
      SVC_WEBAUTHN_ORIGINS: site.origin('localhost'),
    })
    api = service.url.replace('127.0.0.1', 'localhost')
  })
  afterAll(async () => {
    await Promise.all([browser?.close(), service?.close(), site?.close()])
  })
  beforeEach(async () => {
    context = await browser.newContext()
  })
  afterEach(() => context?.close())

  async function openWithAuthenticator(options: { isUserVerified?: boolean } = {}): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const page = await context.newPage()
    await page.goto(`${site.origin('localhost')}/passkeys.html?api=${encodeURIComponent(api)}`)
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: options.isUserVerified ?? true,
        automaticPresenceSimulation: true,
      },
    })
    return { page, cdp, authenticatorId }
  }

  it('enrols a passkey after a password sign-in, then signs in with it alone and reads /v1/me by cookie', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { role: 'OWNER' })
    const { page, cdp, authenticatorId } = await openWithAuthenticator()

    const signedIn = await call(page, 'login', { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })
    expect(signedIn.status).toBe(200)
    const enrolled = await call(page, 'enrolPasskey', user.password, 'Virtual authenticator')
    expect(enrolled).toMatchObject({ status: 201, body: { name: 'Virtual authenticator', lastUsedAt: null } })
    // A discoverable credential for this RP, made with user verification, kept by the authenticator.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    expect(credentials).toHaveLength(1)
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' })

    // A fresh start: no cookie at all, and no login id or password is typed.
    await context.clearCookies()
    expect((await call(page, 'me')).status).toBe(401)
    const byPasskey = await call(page, 'signInWithPasskey')
    expect(byPasskey.status).toBe(200)
    expect(byPasskey.body).toMatchObject({ user: { id: user.id, userLoginId: user.userLoginId, role: 'OWNER', tenantSlug: tenant.slug } })
    const jar = new Map((await context.cookies(api)).map((cookie) => [cookie.name, cookie]))
    expect(jar.get('svc_access_token')).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' })
    expect(jar.get('svc_refresh_token')).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' })
    expect(await page.evaluate('document.cookie')).toBe('')
    const me = await call(page, 'me')
    expect(me).toMatchObject({ status: 200, body: { id: user.id } })
    const listed = await call(page, 'passkeys')
    expect(listed.body.items).toHaveLength(1)
    expect(listed.body.items[0].lastUsedAt).not.toBeNull()

    const events = await owner().selectFrom('auditEvents').select(['type', 'details']).where('tenantId', '=', tenant.id).orderBy('id').execute()
    expect(events.map((event) => [event.type, (event.details as { method?: string }).method ?? null])).toEqual([
      ['LOGIN_SUCCEEDED', 'password'],
      ['PASSKEY_ADDED', null],
      ['LOGIN_SUCCEEDED', 'passkey'],
    ])
  })

  it('signs in no more with a passkey removed from the account, though the authenticator still holds it', async () => {
    const tenant = await createTenant()
    const user = await insertUserWithPassword(tenant, { role: 'MANAGER' })
    const { page, cdp, authenticatorId } = await openWithAuthenticator()
    expect((await call(page, 'login', { userLoginId: user.userLoginId, password: user.password, customId: tenant.customId })).status).toBe(200)
    const enrolled = await call(page, 'enrolPasskey', user.password, 'Laptop')
    expect(enrolled.status).toBe(201)
    expect((await call(page, 'removePasskey', enrolled.body.id, user.password)).status).toBe(204)
    expect((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1)

    await context.clearCookies()
    const refused = await call(page, 'signInWithPasskey')
    expect(refused).toMatchObject({ status: 401, body: { code: 'AUTH_001' } })
    expect((await context.cookies(api)).filter((cookie) => cookie.name === 'svc_access_token')).toEqual([])
  })
})
