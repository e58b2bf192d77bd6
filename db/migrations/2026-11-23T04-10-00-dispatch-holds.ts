import type { Kysely } from 'kysely'

// Held dispatch: a message whose tenant is not ACTIVE, or whose live-provider (extsms) sender setting is not APPROVED,
// is not claimed. It is skipped by the claim's filter (not claimed and given back), so held messages never fill a batch
// ahead of other tenants' due messages, stay PENDING with their attempts untouched, and are claimed as soon as the
// tenant or sender is in order again. Existing rows: unchanged.
// svc_claim_due_sms lives in db/functions and is applied after the migrations (db/function-files.ts); this migration
// stays listed because databases record that it ran.
export async function up(_db: Kysely<any>): Promise<void> {}
