import fp from 'fastify-plugin'
import { createKakaoReads } from '../../lib/dispatch/providers/index.js'
import type { KakaoReads } from '../../lib/dispatch/providers/kakao-reads.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The configured provider's Kakao reads (the mock or the live adapter). Called between transactions, never inside
     * one: a route reads through a proof before its request transaction opens (lib/kakao/provider-refusals.ts).
     */
    kakao: KakaoReads
  }
}

export default fp(
  async (app) => {
    app.decorate('kakao', createKakaoReads(app.env))
  },
  { name: 'kakao-provider', dependencies: ['env'] },
)
