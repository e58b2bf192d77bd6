import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../lib/errors.js'
import type { RouteProof } from '../../lib/http/route-proof.js'

const kProven = Symbol('proven')
type WithProven = FastifyRequest & { [kProven]: { proof: RouteProof; value: unknown } | null }

/**
 * Runs a route's proof (lib/http/route-proof.ts) as an extension of its request transaction
 * (plugins/platform/tenant-tx.ts): after validation, before the transaction opens. A proof that throws answers the
 * request, and no transaction opens.
 */
export default fp(
  async (app) => {
    app.decorateRequest(kProven, null)
    app.decorateRequest('proven', function proven<Proven>(this: FastifyRequest, proof: RouteProof<Proven>): Proven {
      const slot = (this as WithProven)[kProven]
      if (slot?.proof !== proof) throw new AppError('INTERNAL_ERROR', `the proof ${proof.name} did not run for this request`)
      return slot.value as Proven
    })

    app.requestTransaction.extend({
      name: 'route-proof',
      appliesTo: (config) => config.proof !== undefined,
      async beforeOpen(request) {
        const proof = request.routeOptions.config.proof as RouteProof
        ;(request as WithProven)[kProven] = { proof, value: await proof.prove(request) }
        return 'continue'
      },
    })
  },
  { name: 'route-proofs', dependencies: ['tenant-tx'] },
)
