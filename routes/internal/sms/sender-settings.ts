import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ApprovalDecision, SenderSettingRecord } from '../../../db/repos/sms/sender-settings.js'
import type { AuditEvent } from '../../../lib/audit/record.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { maskPhone } from '../../../lib/sms/phone.js'
import { recordSenderDecision } from '../../../lib/sms/sender-approval.js'
import { SenderSettingSchema, toSenderSetting } from '../../../lib/sms/sender-setting-response.js'
import { ApprovalBodySchema, ApprovalParamsSchema, type ApprovalBody } from './sender-settings.schemas.js'

function decisionOf(body: ApprovalBody): ApprovalDecision {
  if (body.registrationStatus === 'APPROVED') return { status: 'APPROVED' }
  if (body.registrationStatus !== 'REJECTED') throw new AppError('APPROVAL_STATUS_INVALID')
  const reason = body.rejectionReason?.trim()
  if (!reason) throw new AppError('REJECTION_REASON_REQUIRED')
  return { status: 'REJECTED', reason }
}

/** The decision as the audit log keeps it: no actor (a signed operations call), the number masked. */
function decisionEvent(setting: SenderSettingRecord, decision: ApprovalDecision): AuditEvent {
  const senderNumber = setting.senderNumber === null ? null : maskPhone(setting.senderNumber)
  return decision.status === 'APPROVED'
    ? { type: 'SENDER_SETTING_APPROVED', targetId: setting.id, details: { senderNumber } }
    : { type: 'SENDER_SETTING_REJECTED', targetId: setting.id, details: { senderNumber, reason: decision.reason } }
}

// Registration with the provider is manual; an operator records its outcome here.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.patch(
    '/sender-settings/:tenantSlug/approval',
    {
      // The tenant comes from the signed X-Tenant-Slug (plugins/platform/internal-signature.ts); no user token is read.
      config: { access: 'internal-signed' },
      schema: {
        operationId: 'decideSenderSetting',
        summary: "Record the provider's decision on a tenant's sender number",
        tags: ['internal'],
        problems: [
          'APPROVAL_STATUS_INVALID',
          'REJECTION_REASON_REQUIRED',
          'SENDER_SETTING_NOT_FOUND',
          'SENDER_NUMBER_CHANGED',
          'SENDER_NUMBER_IN_USE',
        ],
        params: ApprovalParamsSchema,
        body: ApprovalBodySchema,
        response: { 200: SenderSettingSchema, 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema, 409: ProblemSchema },
      },
    },
    async (request) => {
      // Set by the signature check: the tenant transaction this handler runs in is not opened without it.
      const tenantId = request.tenantId!
      const decision = decisionOf(request.body)
      const updated = await recordSenderDecision(request.db, tenantId, decision, request.body.senderNumber)
      await request.audit(decisionEvent(updated, decision))
      return toSenderSetting(updated)
    },
  )
}

export default routes
