import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Env } from '../env.js'

/**
 * SVC_JWT_SECRET when set (required in production). Otherwise a secret generated once and kept under
 * SVC_DATA_DIR, so development tokens survive restarts; `onGenerated` lets the caller log a warning.
 */
export function resolveJwtSecret(env: Env, onGenerated: (path: string) => void): string {
  if (env.SVC_JWT_SECRET) return env.SVC_JWT_SECRET
  const path = join(env.SVC_DATA_DIR, 'jwt-secret')
  try {
    const stored = readFileSync(path, 'utf8').trim()
    if (Buffer.byteLength(stored) >= 32) return stored
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  mkdirSync(env.SVC_DATA_DIR, { recursive: true })
  const secret = randomBytes(48).toString('base64url')
  writeFileSync(path, `${secret}\n`, { mode: 0o600 })
  onGenerated(path)
  return secret
}
