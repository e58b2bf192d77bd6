import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { sql } from 'kysely'
import { StringEnum } from '../../lib/http/response-types.js'

const HealthSchema = Type.Object({ status: StringEnum(['UP', 'DOWN']) })
const PROBE_TIMEOUT_MS = 2000

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      config: { auth: false },
      schema: { tags: ['operations'], response: { 200: HealthSchema, 503: HealthSchema } },
    },
    async (request, reply) => {
      try {
        await Promise.race([
          sql`select 1`.execute(app.db),
          new Promise((_, reject) => setTimeout(() => reject(new Error('health probe timed out')), PROBE_TIMEOUT_MS).unref()),
        ])
        return { status: 'UP' as const }
      } catch (error) {
        request.log.warn({ err: error }, 'health check failed')
        return reply.code(503).send({ status: 'DOWN' as const })
      }
    },
  )
}

export default routes
