import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { kyselyClassRoster } from '../../../db/repos/sms/class-roster.js'
import { findMessage, listRecipients, type MessageRecord } from '../../../db/repos/sms/sms-messages.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import type { AuditDetails } from '../../../lib/audit/record.js'
import { AppError, type ErrorCode } from '../../../lib/errors.js'
import { RECIPIENT_LIST_BODY_LIMIT } from '../../../lib/http/body-limits.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { sendChannel, type SendChannel } from '../../../lib/kakao/alimtalk-send.js'
import { createMessage, sendSettings, type CreatedMessage } from '../../../lib/sms/create-message.js'
import { MessageResponseSchema, toMessageResponse } from '../../../lib/sms/message-response.js'
import { parseScheduledAt } from '../../../lib/sms/scheduled-at.js'
import { classRecipients, directOrGroupRecipients } from '../../../lib/sms/send-recipients.js'
import type { IdempotentRoute } from '../../../plugins/platform/idempotency.js'
import {
  ClassParamsSchema,
  ClassSendBodySchema,
  IdempotencyHeadersSchema,
  SendBodySchema,
  type ClassSendBody,
} from './sms.schemas.js'

const response = {
  201: MessageResponseSchema,
  400: ProblemSchema,
  401: ProblemSchema,
  403: ProblemSchema,
  404: ProblemSchema,
  409: ProblemSchema,
  422: ProblemSchema,
  429: ProblemSchema,
}

// What either kind of send refuses once it has its recipients: their phones and count, the draft
// (parseScheduledAt) and createMessage.
const messageProblems: ErrorCode[] = [
  'TOO_MANY_RECIPIENTS',
  'INVALID_PHONE_NUMBER',
  'TEMPLATE_NOT_FOUND',
  'SCHEDULED_AT_NOT_IN_FUTURE',
  'SCHEDULED_AT_TOO_FAR',
  'TOO_MANY_FOR_ONE_PHONE',
  'CONTENT_TOO_LONG',
  'SENDER_SETTING_NOT_APPROVED',
  'SMS_QUOTA_EXCEEDED',
  'ADVERTISEMENT_QUIET_HOURS',
  'OPT_OUT_NUMBER_REQUIRED',
  'RECIPIENTS_OPTED_OUT',
  'RECIPIENTS_WITHOUT_CONSENT',
  // channel ALIMTALK (lib/kakao/alimtalk-send.ts); KAKAO_CHANNEL_NOT_FOUND is answered 409 here (alimtalkStatuses).
  'ALIMTALK_NOT_FOR_ADVERTISING',
  'KAKAO_TEMPLATE_NOT_FOUND',
  'KAKAO_TEMPLATE_NOT_APPROVED',
  'KAKAO_TEMPLATE_UNKNOWN',
  'KAKAO_VARIABLES_MISSING',
]

/** A send without a linked Kakao channel is a conflict with the academy's state: 409, not the channel read's 404. */
const alimtalkStatuses = { KAKAO_CHANNEL_NOT_FOUND: 409 } as const

/** A replay answers with the message as it is now (its status may have moved on since the first answer). */
export const messageReplay: IdempotentRoute = {
  async load(trx: TenantTx, id: number) {
    const message = await findMessage(trx, id, {})
    if (!message) throw new AppError('SMS_NOT_FOUND')
    return toMessageResponse(message, await listRecipients(trx, id))
  },
}

/** What the audit log says about an accepted send: its shape and origin, never its content or a phone number. */
function acceptanceDetails(message: MessageRecord, classId: number | null): AuditDetails {
  return {
    recipientCount: message.recipientCount,
    purpose: message.purpose,
    optedOutCount: message.optedOutCount,
    noConsentCount: message.noConsentCount,
    messageType: message.messageType,
    scheduledAt: message.scheduledAt?.toISOString() ?? null,
    templateId: message.templateId,
    recipientGroupId: message.recipientGroupId,
    classId,
    channel: message.channel,
    kakaoTemplateId: message.kakaoTemplateId,
  }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const settings = sendSettings(app.env, app.clock)

  // The channel's rules are checked first (lib/kakao/alimtalk-send.ts): its content is the Kakao template's for AlimTalk.
  const draftOf = (request: FastifyRequest, body: ClassSendBody, channel: SendChannel) => ({
    tenantId: request.caller.tenantId,
    senderId: request.caller.userId,
    title: body.title,
    content: channel.content,
    alimtalk: channel.alimtalk,
    templateId: body.templateId ?? null,
    scheduledAt: parseScheduledAt(body.scheduledAt, app.env.SVC_SMS_MAX_SCHEDULE_DAYS),
    purpose: body.purpose ?? 'INFORMATIONAL',
  })

  // The key and the SMS_ACCEPTED event commit with the message: createMessage writes them before the quota's
  // reservation, the transaction's last statement (any later one is refused), so a send refused there leaves neither. A replay
  // never reaches the handler, so one key makes one event. An immediate message is handed to the dispatcher only
  // after that commit.
  const recordAcceptance = (request: FastifyRequest, classId: number | null) => async (message: MessageRecord) => {
    await request.completeIdempotency(message.id, 201)
    await request.audit({ type: 'SMS_ACCEPTED', targetId: message.id, details: acceptanceDetails(message, classId) })
  }
  const created = (request: FastifyRequest, result: CreatedMessage) => {
    if (result.message.scheduledAt === null) request.afterCommit(() => app.dispatcher.kick())
    return toMessageResponse(result.message, result.recipients)
  }

  app.post(
    '/send',
    {
      bodyLimit: RECIPIENT_LIST_BODY_LIMIT,
      config: { access: { audience: 'staff', apiKeyScope: 'sms:send' }, idempotency: messageReplay },
      schema: {
        operationId: 'sendSms',
        summary: 'Send to listed recipients or to one of your groups, now or at scheduledAt',
        tags: ['sms'],
        headers: IdempotencyHeadersSchema,
        body: SendBodySchema,
        response,
        problems: [...messageProblems, 'RECIPIENTS_REQUIRED', 'RECIPIENTS_CONFLICT', 'RECIPIENT_GROUP_NOT_FOUND'],
        problemStatuses: alimtalkStatuses,
      },
    },
    async (request, reply) => {
      const draft = draftOf(request, request.body, await sendChannel(request.db, request.body))
      const resolved = await directOrGroupRecipients(request.db, draft.senderId, request.body)
      const result = await createMessage(request.db, settings, { ...draft, ...resolved }, recordAcceptance(request, null))
      return reply.code(201).send(created(request, result))
    },
  )

  app.post(
    '/send/class/:classId',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:send' }, idempotency: messageReplay },
      schema: {
        operationId: 'sendClassSms',
        summary: "Send to the guardians of a class's active students",
        tags: ['sms'],
        headers: IdempotencyHeadersSchema,
        params: ClassParamsSchema,
        body: ClassSendBodySchema,
        response,
        problems: [...messageProblems, 'CLASS_NOT_FOUND', 'CLASS_HAS_NO_STUDENTS'],
        problemStatuses: alimtalkStatuses,
      },
    },
    async (request, reply) => {
      const draft = draftOf(request, request.body, await sendChannel(request.db, request.body))
      const recipients = await classRecipients(kyselyClassRoster, request.db, request.params.classId)
      const result = await createMessage(
        request.db,
        settings,
        { ...draft, recipients, recipientGroupId: null, recipientType: 'GUARDIAN' },
        recordAcceptance(request, request.params.classId),
      )
      return reply.code(201).send(created(request, result))
    },
  )
}

export default routes
