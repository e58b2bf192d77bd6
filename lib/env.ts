import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

const Bool = (defaultValue: boolean) => Type.Boolean({ default: defaultValue })
const Int = (defaultValue: number, minimum: number, maximum: number) =>
  Type.Integer({ default: defaultValue, minimum, maximum })
const Secret = (minLength = 1) => Type.Optional(Type.String({ minLength }))

/**
 * Every setting the service reads. One schema gives both the start-up validation and the `Env` type;
 * no other module reads `process.env`. Names follow DECISIONS section 7.
 */
export const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  SVC_DATA_DIR: Type.String({ default: './.data', minLength: 1 }),
  SVC_DB_POOL_MAX: Int(10, 1, 200),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Int(8080, 0, 65535),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  SVC_TRUST_PROXY: Bool(false),
  SVC_MIGRATE_ON_START: Bool(true),
  SVC_JWT_SECRET: Secret(32),
  SVC_JWT_ISSUER: Type.String({ default: 'svc-auth-svc', minLength: 1 }),
  SVC_ACCESS_TTL: Int(3600, 60, 86_400),
  SVC_REFRESH_TTL: Int(604_800, 300, 31_536_000),
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
  SVC_SMS_SCHEDULER_CRON: Type.String({ default: '*/5 * * * * *', minLength: 9 }),
  SVC_SMS_RETRY_BASE_SECONDS: Int(30, 1, 3600),
  SVC_SMS_PRICE_SMS: Int(20, 0, 100_000),
  SVC_SMS_PRICE_LMS: Int(50, 0, 100_000),
  SVC_LOGIN_MAX_FAILURES: Int(5, 1, 1000),
  SVC_LOGIN_LOCK_SECONDS: Int(900, 1, 86_400),
  SVC_LOGIN_IP_PER_MINUTE: Int(60, 1, 1_000_000),
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
    if (value !== undefined && value !== '') known[key] = value
  }
  const candidate = Value.Default(EnvSchema, Value.Convert(EnvSchema, known))
  const problems = [...Value.Errors(EnvSchema, candidate)].map(
    (error) => `${error.path.slice(1)}: ${error.message}${error.path === '' ? '' : ` (got ${JSON.stringify(known[error.path.slice(1)])})`}`,
  )
  problems.push(...crossFieldProblems(candidate as Env))
  if (problems.length > 0) throw new ConfigError(problems)
  return candidate as Env
}

function crossFieldProblems(env: Env): string[] {
  const problems: string[] = []
  if (env.NODE_ENV === 'production' && !env.SVC_JWT_SECRET) {
    problems.push('SVC_JWT_SECRET: required when NODE_ENV=production (at least 32 bytes)')
  }
  if (env.SVC_SMS_PROVIDER === 'extsms') {
    for (const key of EXTSMS_REQUIRED) {
      if (!env[key]) problems.push(`${key}: required when SVC_SMS_PROVIDER=extsms`)
    }
  }
  return problems
}

/** Reads `.env` from the working directory when present; real environment variables win. */
export function loadDotEnv(path = '.env'): void {
  try {
    process.loadEnvFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}
