import type { FastifyRequest } from 'fastify'
import { wellFormedJson } from '../text/well-formed.js'

/**
 * A preValidation hook for routes that store or echo text: what is validated, stored and echoed is then the same
 * text (a lone surrogate would otherwise pass the length checks and reach the database and the provider altered).
 */
export async function wellFormedBody(request: FastifyRequest): Promise<void> {
  request.body = wellFormedJson(request.body)
}
