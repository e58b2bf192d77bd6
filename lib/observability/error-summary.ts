const MAX_REASON_LENGTH = 300

/**
 * An expected failure (the database out of reach) as log fields, without the stack pino's `err` serializer would
 * add: what went wrong is in the code and the message, and a stack per refused request only buries it.
 */
export function errorSummary(error: unknown): { code?: string; reason: string } {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  return { ...(typeof code === 'string' ? { code } : {}), reason: message.slice(0, MAX_REASON_LENGTH) }
}
