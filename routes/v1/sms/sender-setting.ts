import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { findSenderSetting, requestSenderNumber } from '../../../db/repos/sms/sender-settings.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { isValidSenderNumber, maskPhone, normalizePhone } from '../../../lib/sms/phone.js'
import {
  SenderSettingSchema,
  SenderSettingStatusSchema,
  toSenderSetting,
  toSenderSettingStatus,
} from '../../../lib/sms/sender-setting-response.js'
import { PutSenderSettingBodySchema } from './sender-setting.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

// The number and its review are the OWNER's; every staff member may see the status.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sender-setting',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'getSenderSetting',
        summary: "The academy's sender number and its review",
        tags: ['sms'],
        response: { 200: SenderSettingSchema, ...errors },
      },
    },
    async (request) => toSenderSetting(await findSenderSetting(request.db)),
  )

  app.get(
    '/sender-setting/status',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'getSenderSettingStatus',
        summary: "Whether the academy's sender number is approved",
        tags: ['sms'],
        response: { 200: SenderSettingStatusSchema, ...errors },
      },
    },
    async (request) => toSenderSettingStatus(await findSenderSetting(request.db)),
  )

  app.put(
    '/sender-setting',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'putSenderSetting',
        summary: 'Ask for a sender number to be reviewed',
        tags: ['sms'],
        body: PutSenderSettingBodySchema,
        problems: ['INVALID_PHONE_NUMBER'],
        response: { 200: SenderSettingSchema, 400: ProblemSchema, ...errors },
      },
    },
    async (request) => {
      const digits = normalizePhone(request.body.senderNumber)
      if (digits === null || !isValidSenderNumber(digits)) {
        throw new AppError('INVALID_PHONE_NUMBER', 'senderNumber is not a valid Korean sender number.')
      }
      // Nothing changed (same number, already APPROVED or PENDING): answer the row as it stands, and record no event.
      const changed = await requestSenderNumber(request.db, request.tenantId!, digits)
      if (!changed) return toSenderSetting(await findSenderSetting(request.db))
      await request.audit({ type: 'SENDER_SETTING_CHANGED', targetId: changed.id, details: { senderNumber: maskPhone(digits) } })
      return toSenderSetting(changed)
    },
  )
}

export default routes
