import type { FastifyReply } from 'fastify'

/**
 * Sends a body that is already JSON text in the route's response shape (built by PostgreSQL), so Fastify passes it
 * through instead of serialising it again. The route's response schema still documents the body; the route's tests
 * compare the text with what the schema's serialiser writes for the same rows.
 */
export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}
