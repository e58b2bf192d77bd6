import { describe, expect, it } from 'vitest'
import { ConfigError, loadEnv } from '../../lib/env.js'
import { expectProblem } from '../support/auth-fixtures.js'
import { useTestApp } from '../support/helper.js'
import { signedInUser } from './passkey-bed.js'

function problemsOf(source: Record<string, string>): string[] {
  try {
    loadEnv(source)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

describe('passkey settings (SVC_WEBAUTHN_*)', () => {
  it('are off by default, and the relying party name defaults to svc', () => {
    const env = loadEnv({})
    expect(env.SVC_WEBAUTHN_RP_ID).toBeUndefined()
    expect(env.SVC_WEBAUTHN_ORIGINS).toBeUndefined()
    expect(env.SVC_WEBAUTHN_RP_NAME).toBe('svc')
  })

  it('take an RP ID with origins on it or its subdomains', () => {
    const env = loadEnv({ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'https://academy.example, https://app.academy.example:8443' })
    expect(env.SVC_WEBAUTHN_RP_ID).toBe('academy.example')
    expect(loadEnv({ SVC_WEBAUTHN_RP_ID: 'localhost', SVC_WEBAUTHN_ORIGINS: 'http://localhost:5173' }).SVC_WEBAUTHN_RP_ID).toBe('localhost')
    // An Android app's origin (its signing certificate's SHA-256) beside the site's.
    const android = `android:apk-key-hash:${'A'.repeat(43)}`
    expect(loadEnv({ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: `https://academy.example,${android}` }).SVC_WEBAUTHN_ORIGINS).toContain(android)
  })

  it.each([
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example' }, /set both/],
    [{ SVC_WEBAUTHN_ORIGINS: 'https://academy.example' }, /set both/],
    [{ SVC_WEBAUTHN_RP_ID: 'https://academy.example', SVC_WEBAUTHN_ORIGINS: 'https://academy.example' }, /SVC_WEBAUTHN_RP_ID: a lowercase host name/],
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'https://academy.example/login' }, /SVC_WEBAUTHN_ORIGINS: each entry must be exactly an origin/],
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'https://evil.example' }, /on academy.example or a subdomain/],
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'android:apk-key-hash:short' }, /each entry must be exactly an origin/],
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'http://academy.example' }, /must be https/],
    [{ SVC_WEBAUTHN_RP_ID: 'academy.example', SVC_WEBAUTHN_ORIGINS: 'https://notacademy.example' }, /subdomain/],
  ])('refuse to start with %j', (source, problem) => {
    expect(problemsOf(source as Record<string, string>).join('\n')).toMatch(problem)
  })
})

describe('passkey routes without the settings', () => {
  const app = useTestApp()

  it('answer 404 PASSKEYS_DISABLED, before any budget or body is read', async () => {
    const who = await signedInUser(app.current)
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/login/passkey/options' }), 404, 'PASSKEYS_DISABLED')
    expectProblem(await app.current.inject({ method: 'POST', url: '/v1/login/passkey', payload: {} }), 404, 'PASSKEYS_DISABLED')
    for (const [method, url] of [
      ['POST', '/v1/me/passkeys/options'],
      ['POST', '/v1/me/passkeys'],
      ['GET', '/v1/me/passkeys'],
      ['PATCH', '/v1/me/passkeys/1'],
      ['DELETE', '/v1/me/passkeys/1'],
    ] as const) {
      expectProblem(await app.current.inject({ method, url, cookies: who.cookies, payload: method === 'GET' ? undefined : {} }), 404, 'PASSKEYS_DISABLED')
    }
  })
})
