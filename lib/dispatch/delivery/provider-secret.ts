import { createHash, timingSafeEqual } from 'node:crypto'

/** The X-Provider-Secret the provider sends: lowercase hex SHA-1 of the webhook token. */
export function providerSecretFor(webhookToken: string): string {
  return createHash('sha1').update(webhookToken).digest('hex')
}

/** Constant-time check; false when no webhook token is configured (mock deployments accept no callbacks). */
export function isValidProviderSecret(presented: string | undefined, webhookToken: string | undefined): boolean {
  if (!presented || !webhookToken) return false
  const expected = Buffer.from(providerSecretFor(webhookToken))
  const actual = Buffer.from(presented)
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
