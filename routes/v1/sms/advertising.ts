import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findOptOutNumber, saveOptOutNumber } from '../../../db/repos/advertising/advertising-settings.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { normalizeOptOutNumber } from '../../../lib/advertising/opt-out-number.js'
import { maskPhone } from '../../../lib/sms/phone.js'
import { AdvertisingSettingsSchema, PutAdvertisingBodySchema } from './advertising.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

// Every staff member may see the number an advertisement will carry; only the OWNER sets it (docs/api.md#advertising).
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/advertising',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'getSmsAdvertising',
        summary: "The academy's advertising settings: the opt-out number",
        tags: ['sms'],
        response: { 200: AdvertisingSettingsSchema, ...errors },
      },
    },
    async (request) => ({ optOutNumber: await findOptOutNumber(request.db) }),
  )

  app.put(
    '/advertising',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'putSmsAdvertising',
        summary: 'Set the opt-out number every advertisement carries',
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
      if (await saveOptOutNumber(request.db, tenantId, digits, userId)) {
        await request.audit({
          type: 'ADVERTISING_SETTINGS_CHANGED',
          targetId: null,
          details: { optOutNumber: digits === null ? null : maskPhone(digits) },
        })
      }
      return { optOutNumber: digits }
    },
  )
}

export default routes
