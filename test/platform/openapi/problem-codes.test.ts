import { describe, expect, it } from 'vitest'
import { AppError } from '../../../lib/errors.js'
import { problemCodesOf, problemStatusOf, type DocumentedRoute } from '../../../lib/openapi/problem-codes.js'
import { problemResponses } from '../../../lib/openapi/problem-responses.js'
import type { IdempotentRoute } from '../../../plugins/platform/idempotency.js'

const replay: IdempotentRoute = { load: async () => undefined }

describe('problemCodesOf (the problem codes an operation lists)', () => {
  const cases: Array<[string, DocumentedRoute, string[]]> = [
    [
      'a public probe that answers while closing',
      { method: 'GET', url: '/actuator/health/liveness', config: { access: 'public', answersWhileClosing: true } },
      ['UNSUPPORTED_MEDIA_TYPE', 'INTERNAL_ERROR'],
    ],
    [
      'a signed-in read without input',
      { method: 'GET', url: '/v1/me', config: { access: 'user' } },
      ['AUTH_002', 'AUTH_003', 'AUTH_004', 'AUTH_010', 'AUTH_015', 'UNSUPPORTED_MEDIA_TYPE', 'API_KEY_SCOPE', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'],
    ],
    [
      'a public write counted against the address budget, with its own codes',
      { method: 'POST', url: '/v1/login', config: { access: { audience: 'public', addressBudget: 'AUTH_018' } }, schema: { problems: ['AUTH_001'] } },
      ['VALIDATION_FAILED', 'AUTH_001', 'AUTH_018', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'],
    ],
    [
      'the refresh cookie route (CSRF applies, no token is read)',
      { method: 'POST', url: '/v1/refresh', config: { access: 'refresh-cookie' } },
      ['VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'CSRF_ORIGIN_REJECTED', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'],
    ],
    [
      'a staff write with an idempotency key',
      { method: 'POST', url: '/v1/sms/send', config: { access: 'staff', idempotency: replay } },
      [
        'VALIDATION_FAILED',
        'AUTH_002',
        'AUTH_003',
        'AUTH_004',
        'AUTH_008',
        'AUTH_010',
        'AUTH_015',
        'IDEMPOTENCY_KEY_MISSING',
        'IDEMPOTENCY_KEY_REUSED',
        'IDEMPOTENCY_REQUEST_IN_PROGRESS',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'API_KEY_SCOPE',
        'CSRF_ORIGIN_REJECTED',
        'SERVICE_UNAVAILABLE',
        'INTERNAL_ERROR',
      ],
    ],
    [
      'a signed operations call',
      { method: 'PATCH', url: '/internal/x/:tenantSlug', config: { access: 'internal-signed' } },
      [
        'VALIDATION_FAILED',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'TENANT_NOT_FOUND',
        'TENANT_MISMATCH',
        'INTERNAL_SIGNATURE_INVALID',
        'SERVICE_UNAVAILABLE',
        'INTERNAL_ERROR',
      ],
    ],
    [
      "the provider's delivery reports",
      { method: 'POST', url: '/v1/sms/solapi/webhook', config: { access: 'provider-callback' } },
      ['VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'WEBHOOK_SECRET_INVALID', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'],
    ],
    [
      'a signed-in write counted against the address budget',
      { method: 'POST', url: '/v1/me/password', config: { access: { audience: 'user', addressBudget: 'RATE_LIMITED' } } },
      [
        'VALIDATION_FAILED',
        'AUTH_002',
        'AUTH_003',
        'AUTH_004',
        'AUTH_010',
        'AUTH_015',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'RATE_LIMITED',
        'API_KEY_SCOPE',
        'CSRF_ORIGIN_REJECTED',
        'SERVICE_UNAVAILABLE',
        'INTERNAL_ERROR',
      ],
    ],
  ]

  it.each(cases)('%s', (_name, route, codes) => {
    expect(problemCodesOf(route)).toEqual(codes)
  })

  it.each(['owner', { roles: ['OWNER', 'MANAGER'] }] as const)('adds AUTH_008 for a route of access %j', (access) => {
    expect(problemCodesOf({ method: 'GET', url: '/v1/sms/sender-setting', config: { access } })).toContain('AUTH_008')
  })

  it('lists a code a route answers with another status under that status, and the catalog status elsewhere', () => {
    const route: DocumentedRoute = { method: 'POST', url: '/v1/sms/send', schema: { problemStatuses: { KAKAO_CHANNEL_NOT_FOUND: 409 } } }
    expect(problemCodesOf(route)).toContain('KAKAO_CHANNEL_NOT_FOUND')
    expect(problemStatusOf(route, 'KAKAO_CHANNEL_NOT_FOUND')).toBe(409)
    expect(problemStatusOf({}, 'KAKAO_CHANNEL_NOT_FOUND')).toBe(404)
    const responses = problemResponses(['KAKAO_CHANNEL_NOT_FOUND'], (code) => problemStatusOf(route, code)) as Record<string, object>
    expect(Object.keys(responses)).toEqual(['409'])
    expect(JSON.stringify(responses['409'])).toContain('"status":409')
    expect(new AppError('KAKAO_CHANNEL_NOT_FOUND', undefined, { status: 409 }).status).toBe(409)
    expect(new AppError('KAKAO_CHANNEL_NOT_FOUND').status).toBe(404)
  })
})
