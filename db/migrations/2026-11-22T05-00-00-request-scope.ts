import type { Kysely } from 'kysely'

// Frozen in time: literal names and values only, never app constants.

// PLACEHOLDER: filled in by the work that owns this migration.
export async function up(_db: Kysely<any>): Promise<void> {}

export async function down(_db: Kysely<any>): Promise<void> {}
