/**
 * Baseline: a login-shaped HTTP server. POST /login with the service's body shape: look the user up in memory,
 * bcrypt.compare at the configured cost (default thread pool), sign an HS256 access and refresh token, answer.
 * No database: the difference to POST /v1/login is the service's own work around the comparison.
 */
import jwt from '@fastify/jwt'
import bcrypt from 'bcrypt'
import Fastify from 'fastify'
import { randomUUID } from 'node:crypto'
import { serve } from './jwt-app.js'
import { baselineSettings } from './settings.js'

const settings = baselineSettings()
const hash = await bcrypt.hash('Bench-Passw0rd-2026', settings.bcryptCost)

const app = Fastify({ logger: false })
await app.register(jwt, { secret: settings.jwtSecret, sign: { algorithm: 'HS256', iss: settings.issuer } })

const LoginBody = {
  type: 'object',
  required: ['userLoginId', 'password'],
  additionalProperties: false,
  properties: {
    userLoginId: { type: 'string', minLength: 1, maxLength: 50 },
    password: { type: 'string', minLength: 1, maxLength: 1000 },
    customId: { type: 'string', minLength: 1, maxLength: 20 },
  },
} as const

app.get('/health', async () => ({ status: 'UP' }))
app.post<{ Body: { userLoginId: string; password: string } }>('/login', { schema: { body: LoginBody } }, async (request, reply) => {
  const { userLoginId, password } = request.body
  if (!(await bcrypt.compare(password, hash))) return reply.code(401).send({ code: 'AUTH_001' })
  const now = Math.floor(Date.now() / 1000)
  const claims = { sub: '1', tenant_id: 1, tenant_slug: 'bench', role: 'MANAGER', sid: randomUUID(), iat: now }
  const access = app.jwt.sign({ ...claims, type: 'access', jti: randomUUID(), exp: now + 3600 })
  const refresh = app.jwt.sign({ ...claims, type: 'refresh', jti: randomUUID(), exp: now + 604_800 })
  reply.header('set-cookie', [`svc_access_token=${access}; Path=/; HttpOnly`, `svc_refresh_token=${refresh}; Path=/; HttpOnly`])
  return { accessExpiresIn: 3600, refreshExpiresIn: 604_800, user: { id: 1, userLoginId, name: 'Bench', role: 'MANAGER', tenantSlug: 'bench' } }
})

await serve(app, settings)
