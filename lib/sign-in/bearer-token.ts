import type { FastifyRequest } from 'fastify'

/** The access token of `Authorization: Bearer <token>`, when that header carries one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] || undefined
}
