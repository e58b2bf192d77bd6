/**
 * Baseline: the JWT ceiling. Fastify verifying an HS256 bearer token (same algorithm, issuer and required claims
 * as the service) and answering its claims; no database. Started by the harness with PORT and SVC_JWT_SECRET.
 */
import { serve, verifyingApp } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
const app = await verifyingApp(settings)

app.get('/health', async () => ({ status: 'UP' }))
app.get('/me', async (request) => request.jwtVerify<Record<string, unknown>>())

await serve(app, settings)
