import fp from 'fastify-plugin'
import kakaoProvider from './kakao-provider.js'

/**
 * KakaoTalk notices (AlimTalk): the tenant's Kakao business channel and the templates it imports from the provider,
 * where they are written and inspected; this plugin decorates the provider's Kakao reads (app.kakao). Routes:
 * routes/v1/kakao/channel.ts, routes/v1/kakao/templates.ts. Logic: lib/kakao/, and the provider's reads beside its
 * SMS adapters: lib/dispatch/providers/kakao-reads.ts, lib/dispatch/providers/extsms-kakao.ts,
 * lib/dispatch/providers/mock-kakao.ts. Repositories: db/repos/kakao/.
 */
export default fp(
  async (app) => {
    await app.register(kakaoProvider)
  },
  { name: 'kakao', dependencies: ['env'] },
)
