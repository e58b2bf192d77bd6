import type { Kysely } from 'kysely'
import type { DB } from '../../db/schema.js'
import type { Env } from '../env.js'
import type { TokenKeys } from './token-keys.js'

/** What the authentication flows need; built once by the auth plugin and by the in-process contract. */
export interface AuthDeps {
  db: Kysely<DB>
  tokenKeys: TokenKeys
  env: Env
}

/** Who is asking, as far as sessions and the audit log record it. */
export interface ClientInfo {
  deviceCategory: 'WEB' | 'MOBILE' | 'TABLET' | 'DESKTOP'
  userAgent: string | null
  ipAddress: string | null
  /** The request's id (X-Request-Id), so an audit event can be traced to its request and log lines. */
  requestId: string | null
}
