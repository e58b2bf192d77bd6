import type { Env } from '../env.js'
import { resolveJwtSecret } from './jwt-secret.js'
import { readSigningKeys } from './signing-keys.js'
import { createTokenKeys, type TokenKeys } from './token-keys.js'

/**
 * The service's token keys: SVC_JWT_KEYS when set (checked with every other setting at start, lib/env.ts), with
 * SVC_JWT_SECRET verifying tokens without `kid` while it is set; otherwise SVC_JWT_SECRET, or outside production
 * the development secret kept under SVC_DATA_DIR (`onGenerated` lets the caller warn).
 */
export function tokenKeysFromEnv(env: Env, onGenerated: (path: string) => void = () => undefined): TokenKeys {
  const set = env.SVC_JWT_KEYS ? readSigningKeys(env.SVC_JWT_KEYS) : { keys: [] }
  if ('problem' in set) throw new Error(set.problem)
  const secret = env.SVC_JWT_SECRET ?? (set.keys.some((key) => key.signs) ? null : resolveJwtSecret(env, onGenerated))
  return createTokenKeys({ keys: set.keys, secret, issuer: env.SVC_JWT_ISSUER })
}
