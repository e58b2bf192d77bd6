/** What the baseline servers share: Fastify verifying the service's access tokens, and serving the harness. */
import jwt from '@fastify/jwt'
import Fastify, { type FastifyInstance } from 'fastify'
import type { baselineSettings } from './settings.js'

type Settings = ReturnType<typeof baselineSettings>

/** The access-token claims the database baselines read. */
export interface Claims {
  sub: string
  tenant_id: number
  jti: string
}

/** Fastify verifying HS256 bearer tokens with the service's algorithm, issuer and required claims. */
export async function verifyingApp(settings: Settings): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(jwt, {
    secret: settings.jwtSecret,
    verify: { algorithms: ['HS256'], allowedIss: settings.issuer, requiredClaims: ['iss', 'iat', 'exp'] },
  })
  return app
}

/** Listens on the harness's port until SIGTERM or SIGINT. */
export async function serve(app: FastifyInstance, settings: Settings): Promise<void> {
  await app.listen({ host: '127.0.0.1', port: settings.port })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)))
}
