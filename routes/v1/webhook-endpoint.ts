import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  replaceSigningSecret,
  saveWebhookEndpoint,
  type WebhookEndpointRecord,
} from '../../db/repos/events/webhook-endpoints.js'
import { AppError } from '../../lib/errors.js'
import { ProblemSchema } from '../../lib/http/problem-schema.js'
import { checkEndpointUrl } from '../../lib/events/endpoint-url.js'
import { WEBHOOK_EVENT_TYPES } from '../../lib/events/event-types.js'
import { newSigningSecret, sealSigningSecret } from '../../lib/events/signing-secret.js'
import {
  PutWebhookEndpointBodySchema,
  WebhookEndpointSchema,
  WebhookSecretSchema,
  type WebhookEndpoint,
} from './webhook-endpoint.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

function toEndpoint(record: WebhookEndpointRecord): WebhookEndpoint {
  return {
    url: record.url,
    events: record.events as WebhookEndpoint['events'],
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  }
}

// The audit log names where events go by origin only: a path or query may carry the receiver's own token.
const originOf = (url: string) => new URL(url).origin

// The academy's one endpoint for delivery events (docs/api.md#events): its OWNER's alone, like the sender number.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhook-endpoint',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Where delivery events are sent, and which',
        tags: ['events'],
        problems: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
        response: { 200: WebhookEndpointSchema, 404: ProblemSchema, ...errors },
      },
    },
    async (request) => {
      const endpoint = await findWebhookEndpoint(request.db)
      if (!endpoint) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND')
      return toEndpoint(endpoint)
    },
  )

  app.put(
    '/webhook-endpoint',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'putWebhookEndpoint',
        summary: 'Set where delivery events are sent (the answer that creates it carries the signing secret, once)',
        tags: ['events'],
        body: PutWebhookEndpointBodySchema,
        problems: ['WEBHOOK_URL_INVALID'],
        response: { 200: WebhookEndpointSchema, 400: ProblemSchema, ...errors },
      },
    },
    async (request) => {
      const { webhooks } = app
      // Resolved before the transaction's first statement: a slow DNS answer holds no pooled connection.
      const url = await checkEndpointUrl(request.body.url, webhooks.allowPrivate, webhooks.resolve)
      const events = request.body.events ?? [...WEBHOOK_EVENT_TYPES]
      const tenantId = request.caller.tenantId
      const secret = newSigningSecret()
      const { record, created } = await saveWebhookEndpoint(
        request.db,
        tenantId,
        { url: url.href, events },
        sealSigningSecret(webhooks.sealingKey, tenantId, secret),
      )
      await request.audit({ type: 'WEBHOOK_ENDPOINT_CHANGED', targetId: null, details: { url: originOf(record.url), events, created } })
      return created ? { ...toEndpoint(record), secret } : toEndpoint(record)
    },
  )

  app.post(
    '/webhook-endpoint/secret',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret; the old one signs no more',
        tags: ['events'],
        problems: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
        response: { 200: WebhookSecretSchema, 404: ProblemSchema, ...errors },
      },
    },
    async (request) => {
      const secret = newSigningSecret()
      const sealed = sealSigningSecret(app.webhooks.sealingKey, request.caller.tenantId, secret)
      if (!(await replaceSigningSecret(request.db, sealed))) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND')
      await request.audit({ type: 'WEBHOOK_ENDPOINT_CHANGED', targetId: null, details: { rotated: true } })
      return { secret }
    },
  )

  app.delete(
    '/webhook-endpoint',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Stop sending delivery events (events not yet delivered are dropped)',
        tags: ['events'],
        response: { 204: Type.Null({ description: 'Removed, or there was none' }), ...errors },
      },
    },
    async (request, reply) => {
      if (await deleteWebhookEndpoint(request.db)) {
        await request.audit({ type: 'WEBHOOK_ENDPOINT_CHANGED', targetId: null, details: { removed: true } })
      }
      return reply.code(204).send(null)
    },
  )
}

export default routes
