import type { FastifyRequest } from 'fastify'

/**
 * A check a route makes after validation and before its request transaction opens, declared in the route file as
 * `config: { proof }` (plugins/platform/route-proofs.ts runs it). It runs there because it must hold no pooled
 * connection (bcrypt) or must count even when the request then fails (a wrong code rolls the request back, yet the
 * try is spent): it commits its own work. It throws to refuse; what it proves, the handler reads with
 * `request.proven(proof)`.
 */
export interface RouteProof<Proven = unknown> {
  readonly name: string
  prove(request: FastifyRequest): Promise<Proven>
}

/** A proof for a route whose validated body is `Body`. */
export function routeProof<Body, Proven = void>(
  name: string,
  prove: (request: FastifyRequest<{ Body: Body }>) => Promise<Proven>,
): RouteProof<Proven> {
  return { name, prove: (request) => prove(request as FastifyRequest<{ Body: Body }>) }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Checked before the route's request transaction opens (lib/http/route-proof.ts). */
    proof?: RouteProof
  }
  interface FastifyRequest {
    /** What the route's proof proved; throws when `proof` is not the route's or has not run. */
    proven<Proven>(proof: RouteProof<Proven>): Proven
  }
}
