/**
 * One request body limit per kind of route, enforced by Fastify before the body is parsed (413 PAYLOAD_TOO_LARGE);
 * docs/api.md#conventions has the table.
 */
const KiB = 1024
const MiB = 1024 * KiB

/** Every route that does not declare its own: logins, profiles, templates, ... are a few hundred bytes. */
export const DEFAULT_BODY_LIMIT = 64 * KiB

/** Sends and recipient groups: 10,000 recipients with names fit comfortably. */
export const RECIPIENT_LIST_BODY_LIMIT = 4 * MiB

/** The provider's delivery reports: up to 10,000 entries in one call (a report for a 10,000-recipient send). */
export const DELIVERY_REPORT_BODY_LIMIT = 4 * MiB

/** Signed operations calls (/internal): small, and their signature is computed over the raw body. */
export const INTERNAL_BODY_LIMIT = 16 * KiB
