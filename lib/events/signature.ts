import { createHmac } from 'node:crypto'
import { signingKeyBytes } from './signing-secret.js'

/**
 * The three headers of Standard Webhooks 1.0: `webhook-id` (the same on every attempt of one event, so a receiver
 * can drop repeats), `webhook-timestamp` (seconds, this attempt's) and `webhook-signature`: `v1,` + base64 of
 * HMAC-SHA256 over `id.timestamp.body` keyed with the secret's bytes. Receivers verify it with the reference
 * library (`standardwebhooks`, test/events) or these few lines.
 */
export function signedHeaders(secret: string, webhookId: string, timestampSeconds: number, body: string): Record<string, string> {
  const signature = createHmac('sha256', signingKeyBytes(secret)).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64')
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  }
}
