import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { isOptedOut, listAdConsents, recordAdConsent, withdrawAdConsent, type AdConsentRecord } from '../../../db/repos/advertising/ad-consents.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { maskPhone, normalizePhone } from '../../../lib/sms/phone.js'
import {
  AdConsentBodySchema,
  AdConsentPageSchema,
  AdConsentParamsSchema,
  AdConsentQuerySchema,
  AdConsentSchema,
  type AdConsent,
} from './ad-consents.schemas.js'

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema }

/** Consents are kept by OWNER and MANAGER, as the opt-out list is; every staff member may read them, masked. */
const CONSENT_KEEPERS = { roles: ['OWNER', 'MANAGER'] } as const

function toAdConsent(record: AdConsentRecord): AdConsent {
  return {
    phone: maskPhone(record.phone),
    source: record.source,
    evidence: record.evidence,
    consentedAt: record.consentedAt.toISOString(),
    confirmedAt: record.confirmedAt.toISOString(),
    createdBy: record.createdBy,
  }
}

/** The stored form of a number as written in a body, a path or a query; one form only, so every writing matches. */
function storedPhone(input: string): string {
  const digits = normalizePhone(input)
  if (digits === null) throw new AppError('INVALID_PHONE_NUMBER', 'phone is not a valid Korean phone number.')
  return digits
}

// Consents to advertising (docs/api.md#advertising): while the academy requires consent, an advertisement reaches
// only numbers with a live one (lib/advertising/consents.ts).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/ad-consents',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'listSmsAdConsents',
        summary: 'The numbers that consented to advertisements, newest first, masked',
        tags: ['sms'],
        querystring: AdConsentQuerySchema,
        problems: ['INVALID_PHONE_NUMBER'],
        response: { 200: AdConsentPageSchema, ...errors },
      },
    },
    async (request) => {
      const { page, size } = request.query
      const phone = request.query.phone === undefined ? undefined : storedPhone(request.query.phone)
      const { items, total } = await listAdConsents(request.db, request.caller.tenantId, { offset: page * size, limit: size, phone })
      const totalPages = Math.ceil(total / size)
      return { items: items.map(toAdConsent), page, perPage: size, total, totalPages, hasNext: page + 1 < totalPages }
    },
  )

  app.post(
    '/ad-consents',
    {
      config: { access: { audience: CONSENT_KEEPERS, apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'addSmsAdConsent',
        summary: "Record a number's consent to advertisements (200 when it had one: source and evidence replaced)",
        tags: ['sms'],
        body: AdConsentBodySchema,
        problems: ['INVALID_PHONE_NUMBER', 'OPT_OUT_LISTED'],
        response: { 200: AdConsentSchema, 201: AdConsentSchema, 409: ProblemSchema, ...errors },
      },
    },
    async (request, reply) => {
      const phone = storedPhone(request.body.phone)
      const { tenantId, userId } = request.caller
      // A refusal stands until someone removes it on purpose: a consent never overrides the opt-out list.
      if (await isOptedOut(request.db, tenantId, phone)) throw new AppError('OPT_OUT_LISTED')
      const { source, evidence } = request.body
      const { record, created } = await recordAdConsent(request.db, tenantId, { phone, source, evidence, userId, at: app.clock() })
      await request.audit({ type: 'AD_CONSENT_ADDED', targetId: null, details: { phone: maskPhone(phone), source, renewed: !created } })
      return reply.code(created ? 201 : 200).send(toAdConsent(record))
    },
  )

  app.delete(
    '/ad-consents/:phone',
    {
      config: { access: { audience: CONSENT_KEEPERS, apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'withdrawSmsAdConsent',
        summary: "Withdraw a number's consent to advertisements",
        tags: ['sms'],
        params: AdConsentParamsSchema,
        problems: ['INVALID_PHONE_NUMBER', 'AD_CONSENT_NOT_FOUND'],
        response: { 204: Type.Null({ description: 'Withdrawn' }), 404: ProblemSchema, ...errors },
      },
    },
    async (request, reply) => {
      const phone = storedPhone(request.params.phone)
      if (!(await withdrawAdConsent(request.db, request.caller.tenantId, phone))) throw new AppError('AD_CONSENT_NOT_FOUND')
      await request.audit({ type: 'AD_CONSENT_WITHDRAWN', targetId: null, details: { phone: maskPhone(phone) } })
      return reply.code(204).send(null)
    },
  )
}

export default routes
