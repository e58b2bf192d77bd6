import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { isIP } from 'node:net'
import cron from 'node-cron'
import { readSigningKeys } from './sign-in/signing-keys.js'
import { legacyKidOf, readDataKeys } from './data-keys/setting.js'
import { isValidSenderNumber, normalizePhone } from './sms/phone.js'

const Bool = (defaultValue: boolean) => Type.Boolean({ default: defaultValue })
const Int = (defaultValue: number, minimum: number, maximum: number) =>
  Type.Integer({ default: defaultValue, minimum, maximum })
// `secret` marks a value a refusal must never repeat (see loadEnv): a key, a token, a password inside a URL.
const Secret = (minLength = 1) => Type.Optional(Type.String({ minLength, secret: true }))
const DatabaseUrl = () => Type.Optional(Type.String({ pattern: '^postgres(ql)?://', secret: true }))

/**
 * Every setting the service reads. One schema gives both the start-up validation and the `Env` type;
 * no other module reads `process.env`. Defaults and meanings: .env.example.
 */
/** The tenant-facing calendar when SVC_TIME_ZONE is not set: the academies this service is for are in Korea. */
export const DEFAULT_TIME_ZONE = 'Asia/Seoul'
/** A provider call starts only while the dispatch lease outlasts its time limit by this much (clocks, scheduling). */
export const LEASE_MARGIN_MS = 1_000

export const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  DATABASE_URL: DatabaseUrl(),
  SVC_DATA_DIR: Type.String({ default: './.data', minLength: 1 }),
  // The owner that migrations run as; the service itself never uses it (DATABASE_URL may name a role owning nothing).
  DATABASE_MIGRATION_URL: DatabaseUrl(),
  SVC_DB_POOL_MAX: Int(10, 1, 200),
  // `pipelined` batches, holds and prepares statements (db/driver/README.md); `plain` is stock node-postgres, one
  // statement per round trip, for debugging and for poolers the pipelined client does not suit.
  SVC_DB_DRIVER: Type.Union([Type.Literal('pipelined'), Type.Literal('plain')], { default: 'pipelined' }),
  // Named prepared statements keep state on a server connection: `false` behind a transaction pooler that does not
  // track them (PgBouncer before 1.21).
  SVC_DB_PREPARED_STATEMENTS: Bool(true),
  SVC_DB_STATEMENT_TIMEOUT_MS: Int(5000, 100, 600_000),
  SVC_DB_CONNECT_TIMEOUT_MS: Int(2000, 100, 60_000),
  // Time a client has to send a whole request, headers and body (lib/http/server-options.ts): 408 beyond it.
  SVC_HTTP_REQUEST_TIMEOUT_MS: Int(60_000, 100, 600_000),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Int(8080, 0, 65535),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  // `false`, a hop count or a comma list of proxy addresses/CIDRs; read with trustProxySetting.
  SVC_TRUST_PROXY: Type.String({ default: 'false', minLength: 1 }),
  // Browser origins (exact `scheme://host[:port]`, comma list) that get CORS on /v1 and may send cookie-authenticated
  // changes; read with corsOriginList. Empty: no CORS, and only the service's own origin may change anything.
  SVC_CORS_ORIGINS: Type.String({ default: '' }),
  SVC_MIGRATE_ON_START: Bool(true),
  SVC_JWT_SECRET: Secret(32),
  // A JWK Set of private keys, as JSON text or `file:` and a path (lib/sign-in/signing-keys.ts): the first that may sign
  // (no `key_ops`, or one with "sign") signs, all verify.
  SVC_JWT_KEYS: Secret(),
  SVC_JWT_ISSUER: Type.String({ default: 'svc-auth-svc', minLength: 1 }),
  SVC_ACCESS_TTL: Int(3600, 60, 86_400),
  SVC_REFRESH_TTL: Int(604_800, 300, 31_536_000),
  // The refresh token the last rotation replaced still answers (with the current pair) this long; 0 = off.
  SVC_REFRESH_REUSE_GRACE_SECONDS: Int(10, 0, 300),
  SVC_COOKIE_SECURE: Bool(true),
  SVC_COOKIE_SAMESITE: Type.Union([Type.Literal('lax'), Type.Literal('strict'), Type.Literal('none')], {
    default: 'lax',
  }),
  SVC_COOKIE_DOMAIN: Type.Optional(Type.String({ minLength: 1 })),
  SVC_BCRYPT_COST: Int(10, 4, 15),
  SVC_INTERNAL_HMAC_SECRET: Secret(16),
  SVC_SMS_PROVIDER: Type.Union([Type.Literal('mock'), Type.Literal('extsms')], { default: 'mock' }),
  SVC_SMS_EXTSMS_API_KEY: Secret(),
  SVC_SMS_EXTSMS_API_SECRET: Secret(),
  SVC_SMS_EXTSMS_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  SVC_SMS_EXTSMS_WEBHOOK_TOKEN: Secret(),
  // `off` makes an instance API-only (no dispatch loop), e.g. to run dispatch in separate worker processes.
  SVC_SMS_DISPATCHER: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  SVC_SMS_MAX_ATTEMPTS: Int(5, 1, 50),
  SVC_SMS_BATCH_SIZE: Int(100, 1, 1000),
  // Messages an instance hands to the provider at once: each attempt is three provider calls (the group API), and a
  // worker waiting on the provider holds no database connection, so this is what carries throughput past latency.
  SVC_SMS_DISPATCH_WORKERS: Int(8, 1, 64),
  // A claim's lease, renewed while an attempt runs: what a dead instance held is taken over after at most this long.
  SVC_SMS_LEASE_SECONDS: Int(30, 5, 3600),
  // The adapter's time limit for one provider call; a call is started only while the lease outlasts it.
  SVC_SMS_PROVIDER_TIMEOUT_MS: Int(10_000, 100, 120_000),
  SVC_SMS_SCHEDULER_CRON: Type.String({ default: '*/5 * * * * *' }),
  SVC_SMS_RETRY_BASE_SECONDS: Int(30, 1, 3600),
  SVC_SMS_PRICE_SMS: Int(20, 0, 100_000),
  SVC_SMS_PRICE_LMS: Int(50, 0, 100_000),
  // A KakaoTalk notice (AlimTalk) per recipient at acceptance (docs/api.md#sending-alimtalk).
  SVC_SMS_PRICE_ALIMTALK: Int(13, 0, 100_000),
  // The tenant-facing calendar (IANA name): the day of the daily quota, the usage days, quiet hours.
  SVC_TIME_ZONE: Type.String({ default: DEFAULT_TIME_ZONE, minLength: 1 }),
  // Delivery events to the tenants' endpoints (docs/api.md#events): the time limit of one attempt, deliveries in
  // flight per instance, and whether plain http and private addresses are allowed (tests, private networks only).
  SVC_WEBHOOK_TIMEOUT_MS: Int(5000, 100, 60_000),
  SVC_WEBHOOK_CONCURRENCY: Int(16, 1, 256),
  // Deliveries of one tenant in flight at once across every instance: what a tenant whose receiver hangs can hold.
  SVC_WEBHOOK_TENANT_CONCURRENCY: Int(2, 1, 256),
  SVC_WEBHOOK_ALLOW_PRIVATE: Bool(false),
  // An Idempotency-Key claimed by a request that neither committed nor gave it back is free after this long.
  SVC_IDEMPOTENCY_CLAIM_SECONDS: Int(30, 5, 3600),
  // Recipients accepted per tenant per local day of SVC_TIME_ZONE (docs/api.md#daily-quota); 0 = unlimited.
  SVC_SMS_TENANT_DAILY_RECIPIENTS: Int(100_000, 0, 1_000_000_000),
  // How far ahead a send may be scheduled, in days (SCHEDULED_AT_TOO_FAR beyond it).
  SVC_SMS_MAX_SCHEDULE_DAYS: Int(90, 1, 3650),
  // Recipients of one send (after merging) that may share a phone number (TOO_MANY_FOR_ONE_PHONE beyond it).
  SVC_SMS_MAX_PER_PHONE: Int(5, 1, 10_000),
  // Days the audit log keeps an event (GET /v1/audit-events); 0 keeps every event. Both retentions are stored by a
  // migration run as the owner's setting (db/repos/audit/retention-settings.ts): the purges read that, never this.
  SVC_AUDIT_RETENTION_DAYS: Int(400, 0, 36_500),
  // Days an SMS message (with its recipients: numbers, names, text) is kept after it was accepted; 0 keeps all.
  SVC_SMS_RETENTION_DAYS: Int(400, 0, 36_500),
  // Consent to advertising (lib/advertising/consents.ts): a consent lives this many days after it was last confirmed,
  // and the notice the law asks for goes out this many days after it (less than the consent's life). Days, fractions
  // allowed.
  SVC_AD_CONSENT_DAYS: Type.Number({ default: 730, exclusiveMinimum: 0, maximum: 36_500 }),
  SVC_AD_CONSENT_NOTICE_DAYS: Type.Number({ default: 700, exclusiveMinimum: 0, maximum: 36_500 }),
  // How often the provider's 080 refusal list is read into each tenant's opt-out list (lib/advertising/opt-out-sync.ts);
  // 0 turns the reading off.
  SVC_OPT_OUT_SYNC_SECONDS: Int(600, 0, 86_400),
  // Partition upkeep of the SMS tables (ranges created ahead, months past retention dropped), as the owner; off: this
  // instance leaves it to another instance or to `npm run migrate` (which also creates the ranges ahead).
  SVC_SMS_PARTITION_UPKEEP: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  // The number system messages (one-time codes) are sent from, national digits; unset: the tenant's APPROVED number.
  SVC_SMS_SYSTEM_SENDER: Type.Optional(Type.String({ pattern: '^[0-9]{8,11}$' })),
  // One-time codes (lib/account-security/codes): lifetime, wrong tries before a code dies, the wait before a new code for the same user
  // and purpose (0: none), and codes a day per user and per phone number across tenants (the SMS-pumping brake).
  SVC_OTP_TTL_SECONDS: Int(300, 60, 3600),
  SVC_OTP_MAX_ATTEMPTS: Int(5, 1, 10),
  SVC_OTP_RESEND_SECONDS: Int(60, 0, 3600),
  SVC_OTP_DAILY_LIMIT: Int(10, 1, 1000),
  // Codes that verify a number (phone verification), per local day and tenant: what self-registered accounts of one
  // academy may spend of its SMS on proving numbers.
  SVC_OTP_TENANT_DAILY_VERIFICATIONS: Int(200, 1, 1_000_000),
  // After a verified phone is replaced, recovery and the SMS second factor send nothing to the new number for this
  // long (lib/account-security/phone/phone-change.ts); 0: no wait.
  SVC_PHONE_CHANGE_HOLD_HOURS: Int(24, 0, 720),
  // Keys for data at rest (lib/data-keys/ring-from-env.ts): a JSON array of {kid, key}, as text or `file:` and a path;
  // the first seals new secrets and keys new code hashes, every key opens what it sealed.
  SVC_DATA_KEYS: Secret(),
  // Without SVC_DATA_KEYS, the one data key (kid default); beside it, the key that still opens what it sealed. Unset:
  // derived from SVC_JWT_SECRET (kid jwt).
  SVC_OTP_SECRET: Secret(32),
  // How long the second step of a login with a second factor may come after its password (the mfa cookie's life).
  SVC_MFA_TOKEN_TTL_SECONDS: Int(300, 60, 3600),
  // Passkeys (lib/passkeys/settings.ts): the relying party's id (a host name, the site's registrable domain or a
  // suffix of it) and the exact origins of the pages that run the ceremonies (comma list), both or neither; without
  // them the passkey routes answer 404 PASSKEYS_DISABLED. The name is what the authenticator shows.
  SVC_WEBAUTHN_RP_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  SVC_WEBAUTHN_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  SVC_WEBAUTHN_RP_NAME: Type.String({ default: 'svc', minLength: 1, maxLength: 64 }),
  SVC_LOGIN_MAX_FAILURES: Int(5, 1, 1000),
  SVC_LOGIN_LOCK_SECONDS: Int(900, 1, 86_400),
  SVC_LOGIN_IP_PER_MINUTE: Int(60, 1, 1_000_000),
  // Requests per minute each API key may make, across every instance (lib/api-keys/key-budget.ts).
  SVC_API_KEY_PER_MINUTE: Int(600, 1, 1_000_000),
  // Prometheus text at GET /metrics; with a token set, only `Authorization: Bearer <token>` reads it.
  SVC_METRICS: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  SVC_METRICS_TOKEN: Secret(16),
})

export type Env = Static<typeof EnvSchema>

const EXTSMS_REQUIRED = [
  'SVC_SMS_EXTSMS_API_KEY',
  'SVC_SMS_EXTSMS_API_SECRET',
  'SVC_SMS_EXTSMS_BASE_URL',
  'SVC_SMS_EXTSMS_WEBHOOK_TOKEN',
] as const

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/**
 * Validates the environment and returns the typed settings, or throws one ConfigError naming every bad or
 * missing variable (so an operator fixes them all in one go instead of one restart per mistake).
 */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const known: Record<string, string> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key]?.trim()
    // An empty line in .env (`SVC_COOKIE_DOMAIN=`) means "unset", not "empty string".
    if (value !== undefined && value !== '') known[key] = canonicalChoice(key, value)
  }
  const candidate = Value.Default(EnvSchema, Value.Convert(EnvSchema, known))
  const problems = [...Value.Errors(EnvSchema, candidate)].map(
    (error) => `${error.path.slice(1)}: ${error.message}${error.path === '' ? '' : ` (got ${shown(error.path.slice(1), known)})`}`,
  )
  problems.push(...crossFieldProblems(candidate as Env))
  if (problems.length > 0) throw new ConfigError(problems)
  return candidate as Env
}

/** The refused value as a problem repeats it: a secret only by its length, since start-up errors reach logs. */
function shown(key: string, known: Record<string, string>): string {
  const value = known[key]
  const schema = EnvSchema.properties[key as keyof typeof EnvSchema.properties] as { secret?: boolean } | undefined
  if (value !== undefined && schema?.secret) return `${value.length} characters, not shown`
  return JSON.stringify(value)
}

/** What Fastify's `trustProxy` receives: nothing trusted, the number of proxy hops, or the proxies' addresses. */
export type TrustProxy = false | number | string[]

// proxy-addr's names for the reserved ranges, accepted as entries of the list.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])
const MAX_HOPS = 16

function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)
}

/**
 * SVC_TRUST_PROXY as Fastify's `trustProxy` (proxy-addr semantics: the client address is the right-most address not
 * added by a trusted proxy), or a problem. `true` is refused: it takes the left-most X-Forwarded-For entry, which
 * the client writes itself, so every per-address limit could be dodged by rotating it.
 */
export function trustProxySetting(value: string): { trust: TrustProxy } | { problem: string } {
  const text = value.trim().toLowerCase()
  if (text === 'false') return { trust: false }
  if (text === 'true') {
    return {
      problem:
        'SVC_TRUST_PROXY: true is refused (it trusts every X-Forwarded-For entry, which any client can spoof); ' +
        'set the hop count (number of proxies in front of the service, e.g. 1) or their addresses/CIDRs as a comma list',
    }
  }
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    return hops <= MAX_HOPS ? { trust: hops === 0 ? false : hops } : { problem: `SVC_TRUST_PROXY: at most ${MAX_HOPS} hops (got ${JSON.stringify(value)})` }
  }
  const entries = text.split(',').map((entry) => entry.trim())
  const bad = entries.filter((entry) => !isProxyAddress(entry))
  if (bad.length > 0) {
    return {
      problem:
        `SVC_TRUST_PROXY: expected false, a hop count or a comma list of proxy addresses/CIDRs ` +
        `(not an address: ${bad.map((entry) => JSON.stringify(entry)).join(', ')})`,
    }
  }
  return { trust: entries }
}

/**
 * SVC_CORS_ORIGINS as a list of origins, or a problem. Each entry must be exactly an origin as a browser sends it
 * in `Origin` (`https://app.example`, `http://localhost:5173`): no path, no trailing slash, no wildcard, lowercase,
 * no default port, since requests are matched by plain comparison.
 */
export function corsOriginList(value: string): { origins: string[] } | { problem: string } {
  return originList('SVC_CORS_ORIGINS', value)
}

/** A comma list of exact origins (see corsOriginList), or a problem naming the setting `name`. */
export function originList(name: string, value: string): { origins: string[] } | { problem: string } {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  const bad = entries.filter((entry) => {
    try {
      const url = new URL(entry)
      return !['http:', 'https:'].includes(url.protocol) || url.origin !== entry || entry.includes('*')
    } catch {
      return true
    }
  })
  if (bad.length > 0) {
    return {
      problem:
        `${name}: each entry must be exactly an origin, scheme://host[:port] with no path or wildcard ` +
        `(not an origin: ${bad.map((entry) => JSON.stringify(entry)).join(', ')})`,
    }
  }
  return { origins: entries }
}

/**
 * An enumerated setting (a union of literals) matches its choices in any case, so an earlier deployment's `Lax`,
 * `INFO` or `Production` keeps working; the value is stored as the schema spells it.
 */
function canonicalChoice(key: string, value: string): string {
  const schema = EnvSchema.properties[key as keyof typeof EnvSchema.properties] as { anyOf?: Array<{ const?: unknown }> }
  const choices = schema.anyOf?.map((choice) => choice.const).filter((choice) => typeof choice === 'string') ?? []
  return choices.find((choice) => choice.toLowerCase() === value.toLowerCase()) ?? value
}

function crossFieldProblems(env: Env): string[] {
  const problems: string[] = []
  const trust = trustProxySetting(env.SVC_TRUST_PROXY)
  if ('problem' in trust) problems.push(trust.problem)
  const cors = corsOriginList(env.SVC_CORS_ORIGINS)
  if ('problem' in cors) problems.push(cors.problem)
  problems.push(...webAuthnProblems(env))
  // Checked here, not first at cron.schedule, so a bad expression is named with every other problem at start.
  if (typeof env.SVC_SMS_SCHEDULER_CRON === 'string' && !cron.validate(env.SVC_SMS_SCHEDULER_CRON)) {
    problems.push(
      `SVC_SMS_SCHEDULER_CRON: not a valid cron expression (5 or 6 fields, seconds first when 6) (got ${JSON.stringify(env.SVC_SMS_SCHEDULER_CRON)})`,
    )
  }
  if (env.SVC_AD_CONSENT_NOTICE_DAYS >= env.SVC_AD_CONSENT_DAYS) {
    problems.push(
      `SVC_AD_CONSENT_NOTICE_DAYS: must be less than SVC_AD_CONSENT_DAYS (${env.SVC_AD_CONSENT_DAYS}), so the notice goes out before the consent lapses (got ${env.SVC_AD_CONSENT_NOTICE_DAYS})`,
    )
  }
  if (env.NODE_ENV === 'production' && !env.SVC_JWT_SECRET && !env.SVC_JWT_KEYS) {
    problems.push('SVC_JWT_SECRET or SVC_JWT_KEYS: one is required when NODE_ENV=production')
  }
  if (env.SVC_JWT_KEYS) {
    const read = readSigningKeys(env.SVC_JWT_KEYS)
    if ('problem' in read) problems.push(read.problem)
    else if (!env.SVC_JWT_SECRET && !read.keys.some((key) => key.signs)) {
      problems.push('SVC_JWT_KEYS: every key is verify-only (key_ops ["verify"]) and SVC_JWT_SECRET is unset: nothing would sign')
    }
  }
  if (env.SVC_DATA_KEYS) {
    const read = readDataKeys(env.SVC_DATA_KEYS, legacyKidOf(env))
    if ('problem' in read) problems.push(read.problem)
  }
  if (!isTimeZone(env.SVC_TIME_ZONE)) {
    problems.push(`SVC_TIME_ZONE: not an IANA time zone name such as Asia/Seoul or UTC (got ${JSON.stringify(env.SVC_TIME_ZONE)})`)
  }
  // The pattern admits digits; a sender must also be a Korean number the provider accepts, as tenants' numbers are.
  const systemSender = env.SVC_SMS_SYSTEM_SENDER
  const digitsOnly = typeof systemSender === 'string' && /^[0-9]{8,11}$/.test(systemSender)
  if (digitsOnly && (!isValidSenderNumber(systemSender) || normalizePhone(systemSender) !== systemSender)) {
    problems.push(`SVC_SMS_SYSTEM_SENDER: not a valid Korean sender number in national digits (got ${JSON.stringify(systemSender)})`)
  }
  if (env.SVC_SMS_PROVIDER === 'extsms') {
    for (const key of EXTSMS_REQUIRED) {
      if (!env[key]) problems.push(`${key}: required when SVC_SMS_PROVIDER=extsms`)
    }
    // An instance calls the provider only while its lease surely outlasts the call: a shorter lease could never call.
    // A value the schema refused is already named; NaN compares false here.
    if (env.SVC_SMS_LEASE_SECONDS * 1000 <= env.SVC_SMS_PROVIDER_TIMEOUT_MS + LEASE_MARGIN_MS) {
      problems.push(
        `SVC_SMS_LEASE_SECONDS: must outlast SVC_SMS_PROVIDER_TIMEOUT_MS (${env.SVC_SMS_PROVIDER_TIMEOUT_MS} ms) by more than ${LEASE_MARGIN_MS} ms (got ${env.SVC_SMS_LEASE_SECONDS})`,
      )
    }
  }
  return problems
}

// An Android app's origin in clientDataJSON: the SHA-256 of its signing certificate, base64url (43 characters).
const ANDROID_APP_ORIGIN = /^android:apk-key-hash:[A-Za-z0-9_-]{43}$/

/**
 * SVC_WEBAUTHN_ORIGINS as a list, or a problem: web origins exactly as browsers send them (see corsOriginList), https
 * (http only on localhost, as browsers allow) on the RP ID or a subdomain of it, since a browser refuses any other
 * pairing and every ceremony would fail; and Android apps' `android:apk-key-hash:` origins.
 */
export function webAuthnOrigins(rpId: string, value: string): { origins: string[] } | { problem: string } {
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  if (entries.length === 0) return { problem: 'SVC_WEBAUTHN_ORIGINS: at least one origin' }
  const web = entries.filter((entry) => !ANDROID_APP_ORIGIN.test(entry))
  const listed = originList('SVC_WEBAUTHN_ORIGINS', web.join(','))
  if ('problem' in listed) return listed
  const unfit = listed.origins.filter((origin) => {
    const url = new URL(origin)
    const host = url.hostname
    const secure = url.protocol === 'https:' || host === 'localhost' || host.endsWith('.localhost')
    return !secure || (host !== rpId && !host.endsWith(`.${rpId}`))
  })
  if (unfit.length > 0) {
    return { problem: `SVC_WEBAUTHN_ORIGINS: each web origin must be https (http only on localhost) on ${rpId} or a subdomain of it (not: ${unfit.join(', ')})` }
  }
  return { origins: entries }
}

/** Passkeys need both the RP ID and the origins, or neither; the RP ID is a host name. */
function webAuthnProblems(env: Env): string[] {
  const rpId = env.SVC_WEBAUTHN_RP_ID
  const origins = env.SVC_WEBAUTHN_ORIGINS
  if (rpId === undefined && origins === undefined) return []
  if (rpId === undefined || origins === undefined) {
    return ['SVC_WEBAUTHN_RP_ID and SVC_WEBAUTHN_ORIGINS: set both to enable passkeys, or neither']
  }
  if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(rpId)) {
    return [`SVC_WEBAUTHN_RP_ID: a lowercase host name without scheme, port or path, such as example.com (got ${JSON.stringify(rpId)})`]
  }
  const listed = webAuthnOrigins(rpId, origins)
  return 'problem' in listed ? [listed.problem] : []
}

/** Whether Node's time zone data knows the name (PostgreSQL's, from the same IANA database, names the same zones). */
function isTimeZone(name: unknown): boolean {
  if (typeof name !== 'string') return false
  try {
    new Intl.DateTimeFormat('en', { timeZone: name })
    return true
  } catch {
    return false
  }
}

/** Reads `.env` from the working directory when present; real environment variables win. */
export function loadDotEnv(path = '.env'): void {
  try {
    process.loadEnvFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}
