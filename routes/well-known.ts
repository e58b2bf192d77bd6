import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'

const PublicJwkSchema = Type.Object(
  {
    kid: Type.String(),
    alg: Type.String(),
    use: Type.Literal('sig'),
    kty: Type.String(),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String()),
    n: Type.Optional(Type.String()),
    e: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)
// The response schema is also a filter: a member it does not name (`d`, `k`, any private part) is never written.
const JwksSchema = Type.Object({ keys: Type.Array(PublicJwkSchema) }, { $id: 'Jwks' })

// Verifiers cache the set; five minutes is how long a key added as second must be published before it is promoted
// (docs/operations.md#rotating-signing-keys).
const CACHE_CONTROL = 'public, max-age=300'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/.well-known/jwks.json',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        operationId: 'getJwks',
        summary: 'The public keys that verify access and refresh tokens (asymmetric keys of SVC_JWT_KEYS)',
        response: { 200: JwksSchema },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', CACHE_CONTROL)
      return app.tokenKeys.jwks
    },
  )
}

export default routes
