/**
 * The key two login ids collide on: NFKC, then a locale-independent full case fold (upper then lower
 * case maps `ß` to `ss` and final sigma to sigma, which lower-casing alone does not), then NFKC again since folding
 * can leave compatibility forms. Stored beside the id (`login_key`) and unique per scope; the id itself is kept as
 * typed. PostgreSQL has no NFKC case fold, so the data layer computes it wherever it writes or looks up the key.
 */
export function loginIdKey(loginId: string): string {
  return loginId.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC')
}
