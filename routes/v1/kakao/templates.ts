import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { findKakaoChannel } from '../../../db/repos/kakao/kakao-channels.js'
import {
  deleteKakaoTemplate,
  findKakaoTemplate,
  listKakaoTemplates,
  refreshKakaoTemplate,
  saveKakaoTemplate,
  type KakaoTemplateRecord,
} from '../../../db/repos/kakao/kakao-templates.js'
import { withRequestTransaction } from '../../../db/tenant-transaction.js'
import type { KakaoTemplate as ProviderTemplate } from '../../../lib/dispatch/providers/kakao-reads.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { routeProof } from '../../../lib/http/route-proof.js'
import { channelMissing, copyOfChannel, templateFromProvider } from '../../../lib/kakao/provider-refusals.js'
import { callerScope } from '../../../lib/sign-in/caller-scope.js'
import {
  ImportKakaoTemplateBodySchema,
  KakaoTemplateIdParamsSchema,
  KakaoTemplateSchema,
  type ImportKakaoTemplateBody,
  type KakaoTemplate,
} from './kakao.schemas.js'

const errors = { 401: ProblemSchema, 403: ProblemSchema }
const targetErrors = { 400: ProblemSchema, ...errors, 404: ProblemSchema }
/** Templates are imported, refreshed and removed by OWNER and MANAGER; every staff member may read them. */
const TEMPLATE_KEEPERS = { roles: ['OWNER', 'MANAGER'] } as const

function toKakaoTemplate(record: KakaoTemplateRecord): KakaoTemplate {
  const { id, providerTemplateId, name, content, variables, buttons, status, refreshedAt } = record
  return { id, providerTemplateId, name, content, variables, buttons, status, refreshedAt: refreshedAt.toISOString() }
}

function templateMissing(id: number): AppError {
  return new AppError('KAKAO_TEMPLATE_NOT_FOUND', `No Kakao template ${id}.`)
}

// Templates are written and inspected at the provider; the academy imports a copy (docs/api.md#importing-templates).
// The provider is read by a proof, before the request transaction opens: the proof checks what it needs of the
// tenant's rows in a short transaction of its own, then calls the provider with no transaction open, and the handler
// checks again what it writes against, since the rows may have changed in between.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const importedTemplate = routeProof<ImportKakaoTemplateBody, ProviderTemplate>('kakao-template-import', async (request) => {
    const channel = await withRequestTransaction(app.db, callerScope(request), findKakaoChannel)
    if (!channel) throw channelMissing()
    return templateFromProvider(app.kakao, request.body.providerTemplateId, request.log)
  })

  const refreshedTemplate = routeProof<unknown, ProviderTemplate>('kakao-template-refresh', async (request) => {
    const { id } = request.params as { id: number }
    const stored = await withRequestTransaction(app.db, callerScope(request), (trx) => findKakaoTemplate(trx, id))
    if (!stored) throw templateMissing(id)
    return templateFromProvider(app.kakao, stored.providerTemplateId, request.log)
  })

  app.get(
    '/templates',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'listKakaoTemplates',
        summary: "The academy's imported Kakao templates, newest import first",
        tags: ['kakao'],
        response: { 200: Type.Array(KakaoTemplateSchema), ...errors },
      },
    },
    async (request) => (await listKakaoTemplates(request.db)).map(toKakaoTemplate),
  )

  app.post(
    '/templates',
    {
      config: { access: TEMPLATE_KEEPERS, proof: importedTemplate },
      schema: {
        operationId: 'importKakaoTemplate',
        summary: "Import a template of the academy's channel from the provider (200: imported before, now refreshed)",
        tags: ['kakao'],
        body: ImportKakaoTemplateBodySchema,
        problems: ['KAKAO_CHANNEL_NOT_FOUND', 'KAKAO_TEMPLATE_UNKNOWN'],
        response: { 200: KakaoTemplateSchema, 201: KakaoTemplateSchema, 400: ProblemSchema, ...errors, 404: ProblemSchema, 409: ProblemSchema },
      },
    },
    async (request, reply) => {
      const copy = copyOfChannel(request.proven(importedTemplate), await findKakaoChannel(request.db))
      const { record, created } = await saveKakaoTemplate(request.db, request.caller.tenantId, copy)
      if (created) {
        const details = { providerTemplateId: record.providerTemplateId, name: record.name, status: record.status }
        await request.audit({ type: 'KAKAO_TEMPLATE_IMPORTED', targetId: record.id, details })
      }
      return reply.code(created ? 201 : 200).send(toKakaoTemplate(record))
    },
  )

  app.get(
    '/templates/:id',
    {
      config: { access: 'staff' },
      schema: {
        operationId: 'getKakaoTemplate',
        summary: 'An imported Kakao template',
        tags: ['kakao'],
        params: KakaoTemplateIdParamsSchema,
        problems: ['KAKAO_TEMPLATE_NOT_FOUND'],
        response: { 200: KakaoTemplateSchema, ...targetErrors },
      },
    },
    async (request) => {
      const record = await findKakaoTemplate(request.db, request.params.id)
      if (!record) throw templateMissing(request.params.id)
      return toKakaoTemplate(record)
    },
  )

  app.post(
    '/templates/:id/refresh',
    {
      config: { access: TEMPLATE_KEEPERS, proof: refreshedTemplate },
      schema: {
        operationId: 'refreshKakaoTemplate',
        summary: 'Read an imported template from the provider again (its inspection status, content and buttons)',
        tags: ['kakao'],
        params: KakaoTemplateIdParamsSchema,
        problems: ['KAKAO_TEMPLATE_NOT_FOUND', 'KAKAO_CHANNEL_NOT_FOUND', 'KAKAO_TEMPLATE_UNKNOWN'],
        response: { 200: KakaoTemplateSchema, ...targetErrors, 409: ProblemSchema },
      },
    },
    async (request) => {
      const copy = copyOfChannel(request.proven(refreshedTemplate), await findKakaoChannel(request.db))
      const record = await refreshKakaoTemplate(request.db, request.params.id, copy)
      if (!record) throw templateMissing(request.params.id)
      return toKakaoTemplate(record)
    },
  )

  app.delete(
    '/templates/:id',
    {
      config: { access: TEMPLATE_KEEPERS },
      schema: {
        operationId: 'deleteKakaoTemplate',
        summary: 'Remove an imported template (the provider keeps it)',
        tags: ['kakao'],
        params: KakaoTemplateIdParamsSchema,
        problems: ['KAKAO_TEMPLATE_NOT_FOUND'],
        response: { 204: Type.Null(), ...targetErrors },
      },
    },
    async (request, reply) => {
      const deleted = await deleteKakaoTemplate(request.db, request.params.id)
      if (!deleted) throw templateMissing(request.params.id)
      const details = { providerTemplateId: deleted.providerTemplateId, name: deleted.name }
      await request.audit({ type: 'KAKAO_TEMPLATE_REMOVED', targetId: deleted.id, details })
      return reply.code(204).send(null)
    },
  )
}

export default routes
