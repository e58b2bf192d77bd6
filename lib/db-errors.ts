/** The constraint a unique violation (SQLSTATE 23505) hit, or null for any other error. */
export function violatedUniqueConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null
  const { code, constraint } = error as { code?: unknown; constraint?: unknown }
  if (code !== '23505') return null
  return typeof constraint === 'string' ? constraint : ''
}
