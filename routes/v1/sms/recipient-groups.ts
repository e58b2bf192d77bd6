import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  findOwnedGroup,
  insertGroup,
  insertMembers,
  listMembers,
  listOwnedGroups,
} from '../../../db/repos/sms/recipient-groups.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { AppError } from '../../../lib/errors.js'
import { RECIPIENT_LIST_BODY_LIMIT } from '../../../lib/http/body-limits.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { GroupResponseSchema, GroupSummarySchema, toGroupResponse, toGroupSummary } from '../../../lib/sms/recipient-group-response.js'
import { assertRecipientCount, normalizeRecipients } from '../../../lib/sms/recipients.js'
import type { IdempotentRoute } from '../../../plugins/platform/idempotency.js'
import { CreateGroupBodySchema, IdempotencyHeadersSchema, IdParamsSchema } from './sms.schemas.js'

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema, 404: ProblemSchema }

async function loadOwnedGroup(trx: TenantTx, id: number, ownerStaffId: number) {
  const group = await findOwnedGroup(trx, id, ownerStaffId)
  if (!group) throw new AppError('RECIPIENT_GROUP_NOT_FOUND')
  return toGroupResponse(group, await listMembers(trx, group.id))
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const groupReplay: IdempotentRoute = {
    load: (trx, id, request) => loadOwnedGroup(trx, id, request.caller.userId),
  }

  app.post(
    '/recipient-groups',
    {
      bodyLimit: RECIPIENT_LIST_BODY_LIMIT,
      config: { access: { audience: 'staff', apiKeyScope: 'sms:send' }, idempotency: groupReplay },
      schema: {
        operationId: 'createRecipientGroup',
        summary: 'Save a list of recipients as your group',
        tags: ['sms'],
        headers: IdempotencyHeadersSchema,
        body: CreateGroupBodySchema,
        problems: ['RECIPIENTS_REQUIRED', 'TOO_MANY_RECIPIENTS', 'INVALID_PHONE_NUMBER'],
        response: { 201: GroupResponseSchema, ...errors, 409: ProblemSchema, 422: ProblemSchema },
      },
    },
    async (request, reply) => {
      const { tenantId, userId } = request.caller
      assertRecipientCount(request.body.recipients.length)
      const members = normalizeRecipients(request.body.recipients)
      const { name, icon } = request.body
      const group = await insertGroup(request.db, { tenantId, ownerStaffId: userId, name, icon: icon ?? null, recipientCount: members.length })
      await insertMembers(request.db, tenantId, group.id, members)
      await request.audit({ type: 'RECIPIENT_GROUP_CREATED', targetId: group.id, details: { name, recipientCount: members.length } })
      await request.completeIdempotency(group.id, 201)
      return reply.code(201).send(toGroupResponse(group, members))
    },
  )

  app.get(
    '/recipient-groups',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:read' } },
      schema: {
        operationId: 'listRecipientGroups',
        summary: 'Your recipient groups, newest first, without members',
        tags: ['sms'],
        response: { 200: Type.Array(GroupSummarySchema), ...errors },
      },
    },
    async (request) => (await listOwnedGroups(request.db, request.caller.userId)).map(toGroupSummary),
  )

  app.get(
    '/recipient-groups/:id',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:read' } },
      schema: {
        operationId: 'getRecipientGroup',
        summary: 'One of your groups with its members, phones masked',
        tags: ['sms'],
        params: IdParamsSchema,
        response: { 200: GroupResponseSchema, ...errors },
        problems: ['RECIPIENT_GROUP_NOT_FOUND'],
      },
    },
    async (request) => loadOwnedGroup(request.db, request.params.id, request.caller.userId),
  )
}

export default routes
