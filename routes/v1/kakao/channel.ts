import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { deleteKakaoChannel, findKakaoChannel, saveKakaoChannel } from '../../../db/repos/kakao/kakao-channels.js'
import type { KakaoChannel as ProviderChannel } from '../../../lib/dispatch/providers/kakao-reads.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { channelFromProvider, channelMissing } from '../../../lib/kakao/provider-refusals.js'
import { KakaoChannelSchema, PutKakaoChannelBodySchema, type PutKakaoChannelBody } from './kakao.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }

// The academy's Kakao business channel (docs/api.md#linking-the-channel): linked by the OWNER, seen by all staff.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  // The provider is read before the request transaction opens, holding no pooled connection while it answers.
  const providerChannel = routeProof<PutKakaoChannelBody, ProviderChannel>('kakao-channel', (request) =>
    channelFromProvider(app.kakao, request.body.pfId, request.log),
  )

  app.get(
    '/channel',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'getKakaoChannel',
        summary: "The academy's Kakao business channel",
        tags: ['kakao'],
        problems: ['KAKAO_CHANNEL_NOT_FOUND'],
        response: { 200: KakaoChannelSchema, ...errors, 404: ProblemSchema },
      },
    },
    async (request) => {
      const channel = await findKakaoChannel(request.db)
      if (!channel) throw channelMissing()
      return channel
    },
  )

  app.put(
    '/channel',
    {
      config: { access: 'owner', proof: providerChannel },
      schema: {
        operationId: 'putKakaoChannel',
        summary: 'Link the Kakao business channel the provider knows by this pfId',
        tags: ['kakao'],
        body: PutKakaoChannelBodySchema,
        problems: ['KAKAO_CHANNEL_UNKNOWN'],
        response: { 200: KakaoChannelSchema, 400: ProblemSchema, ...errors, 409: ProblemSchema },
      },
    },
    async (request) => {
      const { record, linked, previousPfId } = await saveKakaoChannel(request.db, request.caller.tenantId, request.proven(providerChannel))
      if (linked) await request.audit({ type: 'KAKAO_CHANNEL_LINKED', targetId: record.pfId, details: { pfId: record.pfId, previousPfId } })
      return record
    },
  )

  app.delete(
    '/channel',
    {
      config: { access: 'owner' },
      schema: {
        operationId: 'deleteKakaoChannel',
        summary: 'Unlink the Kakao business channel (imported templates stay)',
        tags: ['kakao'],
        response: { 204: Type.Null({ description: 'Unlinked, or none was linked' }), ...errors },
      },
    },
    async (request, reply) => {
      const pfId = await deleteKakaoChannel(request.db)
      if (pfId !== undefined) await request.audit({ type: 'KAKAO_CHANNEL_UNLINKED', targetId: pfId, details: { pfId } })
      return reply.code(204).send(null)
    },
  )
}

export default routes
