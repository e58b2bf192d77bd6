/** The events an endpoint may subscribe to (docs/api.md#events); written by db/functions/svc_webhook_event_of_sms.sql. */
export const WEBHOOK_EVENT_TYPES = ['sms.message.completed', 'sms.message.cancelled'] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/**
 * When a failed delivery is tried again, in seconds after the failure: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h,
 * so an event is tried 8 times over about 27 hours, then given up.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const
