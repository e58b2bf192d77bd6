import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { listHistoryPage } from '../../../db/repos/sms/sms-history.js'
import {
  cancelPendingRecipients,
  cancelScheduledMessage,
  findMessage,
  listRecipients,
  type MessageScope,
} from '../../../db/repos/sms/sms-messages.js'
import { releaseDailyRecipients } from '../../../db/repos/sms/sms-quota.js'
import { AppError } from '../../../lib/errors.js'
import { sendJsonText } from '../../../lib/http/json-text.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { parseHistorySort } from '../../../lib/sms/history-sort.js'
import { inQuietHours } from '../../../lib/advertising/quiet-hours.js'
import { MessageResponseSchema, toMessageResponse } from '../../../lib/sms/message-response.js'
import { HistoryQuerySchema, IdParamsSchema } from './sms.schemas.js'

/** List items carry the content cut to its first 80 characters. */
const PREVIEW_CHARACTERS = 80

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema }

const PageSchema = Type.Object({
  items: Type.Array(MessageResponseSchema),
  page: Type.Integer(),
  perPage: Type.Integer(),
  total: Type.Integer(),
  totalPages: Type.Integer(),
  hasNext: Type.Boolean(),
}, { $id: 'SmsMessagePage' })

/** OWNER and MANAGER act tenant-wide; an INSTRUCTOR only on their own messages (docs/api.md#roles). */
function scopeOf(request: FastifyRequest): MessageScope {
  const identity = request.caller
  return identity.role === 'INSTRUCTOR' ? { senderId: identity.userId } : {}
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/history',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:read' } },
      schema: {
        operationId: 'listSmsHistory',
        summary: 'Messages, a page at a time (an INSTRUCTOR sees only their own)',
        tags: ['sms'],
        querystring: HistoryQuerySchema,
        response: { 200: PageSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { page, size, sort, status, recipientType, purpose, channel, q } = request.query
      const filter = { tenantId: request.caller.tenantId, ...scopeOf(request), status, recipientType, purpose, channel, q }
      const pageRange = { offset: page * size, limit: size }
      const { itemsJson, total } = await listHistoryPage(request.db, filter, parseHistorySort(sort), pageRange, PREVIEW_CHARACTERS)
      const totalPages = Math.ceil(total / size)
      // The items arrive as JSON text in PageSchema's item shape (recipients empty).
      return sendJsonText(
        reply,
        `{"items":${itemsJson},"page":${page},"perPage":${size},"total":${total},"totalPages":${totalPages},"hasNext":${page + 1 < totalPages}}`,
      )
    },
  )

  app.get(
    '/history/:id',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:read' } },
      schema: {
        operationId: 'getSmsMessage',
        summary: 'One message with every recipient, phones masked',
        tags: ['sms'],
        params: IdParamsSchema,
        response: { 200: MessageResponseSchema, ...errors },
        problems: ['SMS_NOT_FOUND'],
      },
    },
    async (request) => {
      const message = await findMessage(request.db, request.params.id, scopeOf(request))
      if (!message) throw new AppError('SMS_NOT_FOUND')
      return toMessageResponse(message, await listRecipients(request.db, message.id))
    },
  )

  app.post(
    '/history/:id/cancel',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:send' } },
      schema: {
        operationId: 'cancelSmsMessage',
        summary: 'Cancel a message not yet sent: scheduled ahead, or held back (quiet hours included) and never handed to the provider',
        tags: ['sms'],
        params: IdParamsSchema,
        response: { 200: MessageResponseSchema, ...errors, 409: ProblemSchema },
        problems: ['SMS_NOT_FOUND', 'SMS_NOT_CANCELLABLE'],
      },
    },
    async (request) => {
      const scope = scopeOf(request)
      const advertisingOpen = !inQuietHours(app.clock(), app.env.SVC_TIME_ZONE)
      const cancelled = await cancelScheduledMessage(request.db, request.params.id, scope, advertisingOpen)
      if (!cancelled) {
        const visible = await findMessage(request.db, request.params.id, scope)
        throw new AppError(visible ? 'SMS_NOT_CANCELLABLE' : 'SMS_NOT_FOUND')
      }
      const cancelledRecipients = await cancelPendingRecipients(request.db, cancelled.id)
      await request.audit({ type: 'SMS_CANCELLED', targetId: cancelled.id, details: { recipientCount: cancelled.recipientCount } })
      // Cancelling gives the recipients back to the day the message was accepted on.
      const accepted = { at: cancelled.createdAt, timeZone: app.env.SVC_TIME_ZONE }
      await releaseDailyRecipients(request.db, request.caller.tenantId, accepted, cancelledRecipients)
      // Its sms.message.cancelled event, if the academy has an endpoint, commits with it: deliver it soon after.
      request.afterCommit(() => app.webhooks.deliverer.kick())
      return toMessageResponse(cancelled, await listRecipients(request.db, cancelled.id))
    },
  )
}

export default routes
