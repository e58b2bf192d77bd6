import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { addOptOut, listOptOuts, removeOptOut, type OptOutRecord } from '../../../db/repos/advertising/opt-outs.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { maskPhone, normalizePhone } from '../../../lib/sms/phone.js'
import {
  OptOutBodySchema,
  OptOutPageSchema,
  OptOutParamsSchema,
  OptOutQuerySchema,
  OptOutSchema,
  type OptOut,
} from './opt-outs.schemas.js'

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema }

/** The list keeps OWNER and MANAGER in charge; every staff member may read it, masked. */
const LIST_KEEPERS = { roles: ['OWNER', 'MANAGER'] } as const

function toOptOut(record: OptOutRecord): OptOut {
  return { phone: maskPhone(record.phone), createdAt: record.createdAt.toISOString(), source: record.source }
}

/** The stored form of a number as written in a body or a path; one form only, so every writing matches. */
function storedPhone(input: string): string {
  const digits = normalizePhone(input)
  if (digits === null) throw new AppError('INVALID_PHONE_NUMBER', 'phone is not a valid Korean phone number.')
  return digits
}

// The tenant's opt-out list (docs/api.md#advertising): numbers no advertisement reaches. Informational messages
// ignore it.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/opt-outs',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'listSmsOptOuts',
        summary: 'The numbers that refused advertisements, newest first, masked',
        tags: ['sms'],
        querystring: OptOutQuerySchema,
        response: { 200: OptOutPageSchema, ...errors },
      },
    },
    async (request) => {
      const { page, size } = request.query
      const { items, total } = await listOptOuts(request.db, request.caller.tenantId, { offset: page * size, limit: size })
      const totalPages = Math.ceil(total / size)
      return { items: items.map(toOptOut), page, perPage: size, total, totalPages, hasNext: page + 1 < totalPages }
    },
  )

  app.post(
    '/opt-outs',
    {
      config: { access: { audience: LIST_KEEPERS, apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'addSmsOptOut',
        summary: 'Put a number on the opt-out list (200 when it is already on it)',
        tags: ['sms'],
        body: OptOutBodySchema,
        problems: ['INVALID_PHONE_NUMBER'],
        response: { 200: OptOutSchema, 201: OptOutSchema, ...errors },
      },
    },
    async (request, reply) => {
      const phone = storedPhone(request.body.phone)
      const { tenantId, userId } = request.caller
      const { record, created } = await addOptOut(request.db, tenantId, phone, userId)
      if (created) await request.audit({ type: 'OPT_OUT_ADDED', targetId: null, details: { phone: maskPhone(phone), source: 'STAFF' } })
      return reply.code(created ? 201 : 200).send(toOptOut(record))
    },
  )

  app.delete(
    '/opt-outs/:phone',
    {
      config: { access: { audience: LIST_KEEPERS, apiKeyScope: 'opt-outs:write' } },
      schema: {
        operationId: 'removeSmsOptOut',
        summary: 'Take a number off the opt-out list',
        tags: ['sms'],
        params: OptOutParamsSchema,
        problems: ['INVALID_PHONE_NUMBER', 'OPT_OUT_NOT_FOUND'],
        response: { 204: Type.Null({ description: 'Removed' }), 404: ProblemSchema, ...errors },
      },
    },
    async (request, reply) => {
      const phone = storedPhone(request.params.phone)
      if (!(await removeOptOut(request.db, request.caller.tenantId, phone))) throw new AppError('OPT_OUT_NOT_FOUND')
      await request.audit({ type: 'OPT_OUT_REMOVED', targetId: null, details: { phone: maskPhone(phone) } })
      return reply.code(204).send(null)
    },
  )
}

export default routes
