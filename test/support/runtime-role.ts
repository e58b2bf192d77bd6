import pg from 'pg'
import { APP_ROLE } from '../../db/database.js'

/**
 * The login role tests connect as at run time, as in a least-privilege production deployment: it owns nothing,
 * is no superuser, cannot bypass RLS and inherits nothing, so every privilege it uses comes from switching to
 * APP_ROLE inside each transaction. Migrations and fixtures connect as the owner instead.
 */
export const RUNTIME_LOGIN_ROLE = 'svc_test_runtime'
const RUNTIME_LOGIN_PASSWORD = 'svc-test-runtime'

/** Creates the login role when the server has none yet (roles are per server, not per database). */
export async function ensureRuntimeLoginRole(ownerUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl })
  await client.connect()
  try {
    await client.query(`
      do $$
      begin
        if not exists (select 1 from pg_roles where rolname = '${RUNTIME_LOGIN_ROLE}') then
          create role ${RUNTIME_LOGIN_ROLE} login nosuperuser nobypassrls noinherit nocreatedb nocreaterole
            password '${RUNTIME_LOGIN_PASSWORD}';
        end if;
      exception when duplicate_object or unique_violation then null; -- a parallel run created it first
      end
      $$`)
    await client.query(`grant ${APP_ROLE} to ${RUNTIME_LOGIN_ROLE}`)
  } finally {
    await client.end()
  }
}

/** The same server and database as `ownerUrl`, as the runtime login role. */
export function runtimeUrl(ownerUrl: string): string {
  const parsed = new URL(ownerUrl)
  parsed.username = RUNTIME_LOGIN_ROLE
  parsed.password = RUNTIME_LOGIN_PASSWORD
  return parsed.toString()
}
