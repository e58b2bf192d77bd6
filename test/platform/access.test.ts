import type { RouteOptions } from 'fastify'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { resolveAccess, type Access } from '../../lib/http/access.js'
import { buildAppWith, useTestApp } from '../support/helper.js'

describe('access plugin', () => {
  it('refuses to start when a route declares no access', async () => {
    const started = buildAppWith(async (test) => {
      test.get('/v1/test-forgotten', async () => ({ secret: 'anyone could read this' }))
    })
    await expect(started).rejects.toThrow('GET /v1/test-forgotten: no access policy (config.access)')
  })

  it('refuses to start when a route declares an access that does not exist', async () => {
    const started = buildAppWith(async (test) => {
      test.get('/v1/test-typo', { config: { access: 'staf' as never } }, async () => ({ ok: true }))
    })
    await expect(started).rejects.toThrow(/not an access policy: "staf"/)
  })

  it('refuses to start when an API key scope is unknown, or names a route a key could not act on', async () => {
    const unknown = buildAppWith(async (test) => {
      test.get('/v1/test-scope', { config: { access: { audience: 'staff', apiKeyScope: 'sms:everything' as never } } }, async () => ({}))
    })
    await expect(unknown).rejects.toThrow(/not an access policy/)
    const ownerOnly = buildAppWith(async (test) => {
      test.get('/v1/test-owner-scope', { config: { access: { audience: 'owner', apiKeyScope: 'sms:read' } } }, async () => ({}))
    })
    await expect(ownerOnly).rejects.toThrow(/needs a route for signed-in OWNERs and MANAGERs/)
    const publicRoute = buildAppWith(async (test) => {
      test.get('/v1/test-public-scope', { config: { access: { audience: 'public', apiKeyScope: 'sms:read' } } }, async () => ({}))
    })
    await expect(publicRoute).rejects.toThrow(/needs a route for signed-in OWNERs and MANAGERs/)
  })

  it('refuses to start with an old-style flag instead of an access', async () => {
    const started = buildAppWith(async (test) => {
      test.get('/v1/test-old-flag', { config: { auth: false } as never }, async () => ({ ok: true }))
    })
    await expect(started).rejects.toThrow('GET /v1/test-old-flag: no access policy (config.access)')
  })

  describe('the service routes', () => {
    // Read once the app is ready: a library's routes get their access from a later onRoute hook.
    const routes: RouteOptions[] = []
    const app = useTestApp({ before: (fastify) => {
          fastify.addHook('onRoute', (route) => {
            routes.push(route)
          })
        } })

    // The whole access map in one place: a change to who may call a route shows in review here.
    it('declares who may call each one', () => {
      const described = (access: Access | undefined) => {
        const policy = resolveAccess(access)
        return (
          JSON.stringify(policy.audience) +
          (policy.addressBudget ? ` + ${policy.addressBudget}` : '') +
          (policy.apiKeyScope ? ` + key ${policy.apiKeyScope}` : '')
        )
      }
      const audiences = Object.fromEntries(
        routes.flatMap((route) =>
          [route.method]
            .flat()
            .filter((method) => method !== 'HEAD' && !route.url.startsWith('/docs'))
            .map((method) => [`${method} ${route.url}`, described(route.config?.access)]),
        ),
      )
      expect(audiences).toEqual({
        'GET /metrics': '"metrics-token"',
        'GET /openapi.json': '"public"',
        'GET /.well-known/jwks.json': '"public"',
        'GET /actuator/health': '"public"',
        'GET /actuator/health/liveness': '"public"',
        'GET /actuator/health/readiness': '"public"',
        'PATCH /internal/sms/sender-settings/:tenantSlug/approval': '"internal-signed"',
        'GET /v1/audit-events': '"owner"',
        'POST /v1/api-keys': '"owner"',
        'GET /v1/api-keys': '"owner"',
        'DELETE /v1/api-keys/:id': '"owner"',
        'POST /v1/login': '"public" + AUTH_018',
        'POST /v1/login/mfa': '"mfa-cookie" + AUTH_018',
        'POST /v1/login/mfa/sms': '"mfa-cookie" + AUTH_018',
        'POST /v1/login/passkey/options': '"public" + AUTH_018',
        'POST /v1/login/passkey': '"public" + AUTH_018',
        'POST /v1/me/passkeys/options': '"user"',
        'POST /v1/me/passkeys': '"user" + RATE_LIMITED',
        'GET /v1/me/passkeys': '"user"',
        'PATCH /v1/me/passkeys/:id': '"user"',
        'DELETE /v1/me/passkeys/:id': '"user" + RATE_LIMITED',
        'POST /v1/logout': '"user"',
        'POST /v1/logout-all': '"user"',
        'GET /v1/me/': '"user"',
        'PATCH /v1/me/': '"user"',
        'POST /v1/me/mfa/recovery-codes': '"user" + RATE_LIMITED',
        'POST /v1/me/mfa/sms': '"user" + RATE_LIMITED',
        'POST /v1/me/mfa/sms/disable': '"user" + RATE_LIMITED',
        'POST /v1/me/mfa/totp': '"user" + RATE_LIMITED',
        'POST /v1/me/mfa/totp/confirm': '"user"',
        'POST /v1/me/mfa/totp/disable': '"user" + RATE_LIMITED',
        'POST /v1/me/password': '"user" + RATE_LIMITED',
        'PATCH /v1/me/avatar': '"user"',
        'POST /v1/me/phone/verification': '"user" + RATE_LIMITED',
        'POST /v1/me/phone/verification/confirm': '"user" + RATE_LIMITED',
        'GET /v1/me/mfa': '"user"',
        'GET /v1/me/sessions': '"user"',
        'DELETE /v1/me/sessions/:sid': '"user"',
        'DELETE /v1/me/sessions': '"user"',
        'POST /v1/password/forgot': '"public" + RATE_LIMITED',
        'POST /v1/password/reset': '"public" + RATE_LIMITED',
        'POST /v1/refresh': '"refresh-cookie"',
        'POST /v1/register': '"public" + RATE_LIMITED',
        'POST /v1/register/owner': '"public" + RATE_LIMITED',
        'GET /v1/sms-templates/': '"staff" + key sms:read',
        'POST /v1/sms-templates/': '"staff" + key templates:write',
        'PATCH /v1/sms-templates/:id': '"staff" + key templates:write',
        'DELETE /v1/sms-templates/:id': '"staff" + key templates:write',
        'GET /v1/sms/history': '"staff" + key sms:read',
        'GET /v1/sms/history/:id': '"staff" + key sms:read',
        'POST /v1/sms/history/:id/cancel': '"staff" + key sms:send',
        'POST /v1/sms/recipient-groups': '"staff" + key sms:send',
        'GET /v1/sms/recipient-groups': '"staff" + key sms:read',
        'GET /v1/sms/recipient-groups/:id': '"staff" + key sms:read',
        'POST /v1/sms/send': '"staff" + key sms:send',
        'POST /v1/sms/send/class/:classId': '"staff" + key sms:send',
        'GET /v1/sms/sender-setting': '"owner"',
        'GET /v1/sms/sender-setting/status': '"staff"',
        'PUT /v1/sms/sender-setting': '"owner"',
        'GET /v1/sms/usage': '{"roles":["OWNER","MANAGER"]} + key usage:read',
        'GET /v1/webhook-endpoint': '"owner"',
        'PUT /v1/webhook-endpoint': '"owner"',
        'DELETE /v1/webhook-endpoint': '"owner"',
        'POST /v1/webhook-endpoint/secret': '"owner"',
        'GET /v1/sms/advertising': '"staff"',
        'PUT /v1/sms/advertising': '"owner"',
        'GET /v1/sms/opt-outs': '"staff" + key opt-outs:write',
        'POST /v1/sms/opt-outs': '{"roles":["OWNER","MANAGER"]} + key opt-outs:write',
        'DELETE /v1/sms/opt-outs/:phone': '{"roles":["OWNER","MANAGER"]} + key opt-outs:write',
        'GET /v1/sms/ad-consents': '"staff" + key opt-outs:write',
        'POST /v1/sms/ad-consents': '{"roles":["OWNER","MANAGER"]} + key opt-outs:write',
        'DELETE /v1/sms/ad-consents/:phone': '{"roles":["OWNER","MANAGER"]} + key opt-outs:write',
        'POST /v1/sms/solapi/webhook': '"provider-callback"',
        'GET /v1/kakao/channel': '"staff"',
        'PUT /v1/kakao/channel': '"owner"',
        'DELETE /v1/kakao/channel': '"owner"',
        'GET /v1/kakao/templates': '"staff"',
        'POST /v1/kakao/templates': '{"roles":["OWNER","MANAGER"]}',
        'GET /v1/kakao/templates/:id': '"staff"',
        'POST /v1/kakao/templates/:id/refresh': '{"roles":["OWNER","MANAGER"]}',
        'DELETE /v1/kakao/templates/:id': '{"roles":["OWNER","MANAGER"]}',
      })
    })
  })

  it('routes import nothing from plugins/ but types', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'routes'], { encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts'))
    expect(files.length).toBeGreaterThan(5)
    const offending = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /from '(\.\.\/)+plugins\//.test(line) && !/^import type /.test(line))
        .map((line) => `${file}: ${line}`),
    )
    expect(offending).toEqual([])
  })
})
