import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findAdvertisingSettings, saveConsentRequired, saveOptOutNumber } from '../../../db/repos/advertising/advertising-settings.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { normalizeOptOutNumber } from '../../../lib/advertising/opt-out-number.js'
import { maskPhone } from '../../../lib/sms/phone.js'
import type { AuditDetails } from '../../../lib/audit/record.js'
import { AdvertisingSettingsSchema, PutAdvertisingBodySchema } from './advertising.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

// Every staff member may see the number an advertisement will carry and whether it needs consent; only the OWNER
// sets them (docs/api.md#advertising).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/advertising',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'getSmsAdvertising',
        summary: "The academy's advertising settings: the opt-out number, and whether consent is required",
        tags: ['sms'],
        response: { 200: AdvertisingSettingsSchema, ...errors },
      },
    },
    async (request) => findAdvertisingSettings(request.db),
  )

  app.put(
    '/advertising',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'putSmsAdvertising',
        summary: 'Set the opt-out number every advertisement carries, and whether advertisements need consent',
        tags: ['sms'],
        body: PutAdvertisingBodySchema,
        problems: ['INVALID_PHONE_NUMBER'],
        response: { 200: AdvertisingSettingsSchema, 400: ProblemSchema, ...errors },
      },
    },
    async (request) => {
      const given = request.body.optOutNumber
      const digits = given === null ? null : normalizeOptOutNumber(given)
      if (given !== null && digits === null) {
        throw new AppError('INVALID_PHONE_NUMBER', 'optOutNumber must be a free 080 number: 080 and 7 or 8 more digits.')
      }
      const { tenantId, userId } = request.caller
      const { consentRequired } = request.body
      const details: AuditDetails = {}
      if (await saveOptOutNumber(request.db, tenantId, digits, userId)) details.optOutNumber = digits === null ? null : maskPhone(digits)
      // Turning consent off makes advertisements reach numbers nobody recorded an agreement of: always audited.
      if (consentRequired !== undefined && (await saveConsentRequired(request.db, tenantId, consentRequired, userId))) {
        details.consentRequired = consentRequired
      }
      if (Object.keys(details).length > 0) await request.audit({ type: 'ADVERTISING_SETTINGS_CHANGED', targetId: null, details })
      return findAdvertisingSettings(request.db)
    },
  )
}

export default routes
