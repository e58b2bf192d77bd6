/**
 * What an audit event must never carry (a password, code, token, secret or whole phone number), as patterns a
 * scan can find without knowing the values: the run's global teardown (test/support/global-setup.ts) applies it to every
 * event the suite wrote, and the tests of each event check the very values they used.
 */

export interface ScannedEvent {
  id: number | string
  type: string
  targetId: string | null
  details: unknown
}

// Details keys that name a credential: whatever their value, they have no place in the log.
// `pass` but not `passkey`: a passkey's id and name are no secret (its private key never leaves the authenticator).
const CREDENTIAL_KEY = /pass(?!key)(word)?|secret|token|^code$|otp|totp|recovery|hash|jwt|cookie|authorization/i

const FINDINGS: ReadonlyArray<[string, RegExp]> = [
  ['a JWT', /eyJ[\w-]{8,}\.[\w-]{8,}/],
  ['a bcrypt hash', /\$2[aby]\$\d\d\$/],
  ['a webhook secret', /whsec_/],
  // An integrator's API key: the list's prefix (svck_ and 8 characters) is no key.
  ['an API key', /svck_[\w-]{20,}/],
  // Nine to twelve digits, with or without separators, unmasked: a Korean phone number, +82 form included (masked
  // ones carry '*'). A longer run is no phone number: SMS message ids have 16 digits (2026110000000123).
  ['a whole phone number', /(?<![\w*])\d(?:[ -]?\d){8,11}(?![\w*]|[ -]?\d)/],
  // A one-time code on its own: exactly six digits as a whole value.
  ['a six-digit code', /^\d{6}$/],
]

// A session id: its hex groups may hold long runs of decimal digits, which are no phone number.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function* strings(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value]
  else if (Array.isArray(value)) for (const [index, item] of value.entries()) yield* strings(item, `${path}[${index}]`)
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) yield* strings(item, `${path}.${key}`)
  }
}

function* keys(value: unknown, path: string): Generator<string> {
  if (Array.isArray(value)) for (const [index, item] of value.entries()) yield* keys(item, `${path}[${index}]`)
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      yield `${path}.${key}`
      yield* keys(item, `${path}.${key}`)
    }
  }
}

/** Every place in the events that looks like a secret, as `event <id> (<type>) <path>: <what>`; empty when clean. */
export function findSecrets(events: readonly ScannedEvent[]): string[] {
  const found: string[] = []
  for (const event of events) {
    const where = `event ${event.id} (${event.type})`
    for (const path of keys(event.details, 'details')) {
      const key = path.slice(path.lastIndexOf('.') + 1)
      if (CREDENTIAL_KEY.test(key)) found.push(`${where} ${path}: a key that names a credential`)
    }
    const values = [...strings(event.details, 'details'), ...(event.targetId === null ? [] : [['targetId', event.targetId] as [string, string]])]
    for (const [path, value] of values) {
      if (UUID.test(value)) continue
      for (const [what, pattern] of FINDINGS) if (pattern.test(value)) found.push(`${where} ${path}: ${what}`)
    }
  }
  return found
}
