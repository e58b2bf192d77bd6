/**
 * An `Idempotency-Key`: 1-255 visible ASCII characters. The plugin checks it before validation (so a missing or
 * malformed key answers IDEMPOTENCY_KEY_MISSING); routes declare the same pattern in their header schema so the
 * document shows it.
 */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$'
