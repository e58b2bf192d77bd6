import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from '../../lib/http/response-types.js'
import { WEBHOOK_EVENT_TYPES } from '../../lib/events/event-types.js'

const EventTypeSchema = StringEnum(WEBHOOK_EVENT_TYPES, { $id: 'WebhookEventType' })

// The URL is judged by lib/events/endpoint-url.ts, its length included: every bad one is WEBHOOK_URL_INVALID.
export const PutWebhookEndpointBodySchema = Type.Object(
  {
    url: Type.String({ description: 'https:// URL that receives the events' }),
    events: Type.Optional(
      Type.Array(EventTypeSchema, { minItems: 1, uniqueItems: true, description: 'The events to receive; default all' }),
    ),
  },
  { additionalProperties: false, examples: [{ url: 'https://academy.example/hooks/sms', events: ['sms.message.completed'] }] },
)
export type PutWebhookEndpointBody = Static<typeof PutWebhookEndpointBodySchema>

const endpointExample = {
  url: 'https://academy.example/hooks/sms',
  events: ['sms.message.completed', 'sms.message.cancelled'],
  createdAt: '2026-11-28T09:00:00.000Z',
  updatedAt: '2026-11-28T09:00:00.000Z',
}

export const WebhookEndpointSchema = Type.Object(
  {
    url: Type.String(),
    events: Type.Array(EventTypeSchema),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    secret: Type.Optional(
      Type.String({ description: 'Only in the answer that created the endpoint: whsec_ + base64. Keep it; it is never shown again.' }),
    ),
  },
  { $id: 'WebhookEndpoint', examples: [endpointExample] },
)
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>

export const WebhookSecretSchema = Type.Object(
  { secret: Type.String({ description: 'The new signing secret, whsec_ + base64; the old one signs no more' }) },
  { $id: 'WebhookSecret', examples: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }] },
)
