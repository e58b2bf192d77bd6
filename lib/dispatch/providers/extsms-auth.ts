import { createHmac, randomInt } from 'node:crypto'

/** The live provider's request signature (docs/provider.md#authentication). */

const SALT_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const SALT_LENGTH = 32

/** 32 characters of [0-9A-Za-z] from the CSPRNG; the provider rejects a reused signature, so salts must not repeat. */
export function randomSalt(): string {
  let salt = ''
  for (let i = 0; i < SALT_LENGTH; i++) salt += SALT_ALPHABET[randomInt(SALT_ALPHABET.length)]
  return salt
}

/** Lowercase hex HMAC-SHA256 keyed by the secret over `date + salt`; body, method and path are not signed. */
export function signature(apiSecret: string, date: string, salt: string): string {
  return createHmac('sha256', apiSecret).update(date + salt).digest('hex')
}

export function authorizationHeader(apiKey: string, apiSecret: string, now = new Date(), salt = randomSalt()): string {
  const date = now.toISOString().replace(/\.\d{3}Z$/, 'Z')
  return `HMAC-SHA256 apiKey=${apiKey}, date=${date}, salt=${salt}, signature=${signature(apiSecret, date, salt)}`
}
