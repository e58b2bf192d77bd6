/**
 * Baseline: the JWT ceiling. Fastify verifying an HS256 bearer token (same algorithm, issuer and required claims
 * as the service) and answering its claims; no database. Started by the harness with PORT and SVC_JWT_SECRET.
 */
import jwt from '@fastify/jwt'
import Fastify from 'fastify'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
const app = Fastify({ logger: false })
await app.register(jwt, {
  secret: settings.jwtSecret,
  verify: { algorithms: ['HS256'], allowedIss: settings.issuer, requiredClaims: ['iss', 'iat', 'exp'] },
})

app.get('/health', async () => ({ status: 'UP' }))
app.get('/me', async (request) => request.jwtVerify<Record<string, unknown>>())

await app.listen({ host: '127.0.0.1', port: settings.port })
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)))
