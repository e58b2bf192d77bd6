import type { FastifyInstance } from 'fastify'
import { wellFormedBody } from '../../../lib/http/well-formed-body.js'

export default async function kakaoHooks(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', wellFormedBody)
}
