import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  countTemplates,
  deleteTemplate,
  findTemplateGuard,
  insertTemplate,
  listTemplates,
  updateTemplate,
  type TemplateChanges,
  type TemplateEditor,
} from '../../../db/repos/sms/sms-templates.js'
import type { TenantTx } from '../../../db/tenant-transaction.js'
import { AppError } from '../../../lib/errors.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { LMS_MAX_BYTES, smsByteLength } from '../../../lib/sms/sizing.js'
import { TemplatePageSchema, TemplateSchema, toTemplate, toTemplatePage } from '../../../lib/sms/template-response.js'
import type { Identity } from '../../../lib/sign-in/identity.js'
import {
  CreateTemplateBodySchema,
  ListTemplatesQuerySchema,
  TemplateIdParamsSchema,
  UpdateTemplateBodySchema,
} from './templates.schemas.js'

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema }
const targetErrors = { ...errors, 404: ProblemSchema }
const TEMPLATE_FIELDS = ['name', 'content', 'category'] as const

/** The creator, an OWNER or a MANAGER may change or delete a template. */
function editorOf(identity: Identity): TemplateEditor {
  return { userId: identity.userId, anyTemplate: identity.role === 'OWNER' || identity.role === 'MANAGER' }
}

function assertContentFits(content: string | undefined): void {
  if (content === undefined) return
  const bytes = smsByteLength(content)
  if (bytes > LMS_MAX_BYTES) {
    throw new AppError('CONTENT_TOO_LONG', `The content is ${bytes} bytes; the limit is ${LMS_MAX_BYTES} bytes.`)
  }
}

// A PATCH that changes nothing is refused rather than counted as an edit (a new version for no change).
function assertSomethingChanges(changes: TemplateChanges): void {
  if (Object.keys(changes).length > 0) return
  throw new AppError('VALIDATION_FAILED', 'Give at least one of name, content or category besides version.', {
    errors: [{ field: 'body', message: 'needs at least one of name, content, category' }],
  })
}

/**
 * Which fields an edit wrote, in a fixed order, for the audit log: their names only, since the content is the
 * tenant's text and an event keeps no message text.
 */
function changedFields(changes: TemplateChanges): string[] {
  return TEMPLATE_FIELDS.filter((field) => changes[field] !== undefined)
}

/**
 * A guarded write touched no row: say why, in this order, so an unknown id is 404 for everyone and a caller
 * who may not edit the template learns nothing about its version.
 */
async function whyUntouched(trx: TenantTx, id: number, editor: TemplateEditor, sentVersion?: number): Promise<never> {
  const guard = await findTemplateGuard(trx, id)
  if (!guard) throw new AppError('TEMPLATE_NOT_FOUND', `No template ${id}.`)
  if (!editor.anyTemplate && guard.createdBy !== editor.userId) {
    throw new AppError('AUTH_008', 'Only the creator, an OWNER or a MANAGER may change this template.')
  }
  // DELETE carries no version: only a row that appeared after the delete statement can get here.
  if (sentVersion === undefined) throw new AppError('TEMPLATE_NOT_FOUND', `No template ${id}.`)
  throw new AppError('VERSION_CONFLICT', `The template is at version ${guard.version}, not ${sentVersion}.`)
}

// Staff only (autohooks.ts). No idempotency keys here: a retried create makes a second template.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'sms:read' } },
      schema: {
        operationId: 'listSmsTemplates',
        summary: "The academy's templates, newest first",
        tags: ['sms-templates'],
        querystring: ListTemplatesQuerySchema,
        response: { 200: TemplatePageSchema, ...errors },
      },
    },
    async (request) => {
      const { page, size, category } = request.query
      const records = await listTemplates(request.db, { offset: page * size, limit: size, category })
      const total = await countTemplates(request.db, category)
      return toTemplatePage(records, page, size, total)
    },
  )

  app.post(
    '/',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'templates:write' } },
      schema: {
        operationId: 'createSmsTemplate',
        summary: 'Create a template',
        tags: ['sms-templates'],
        body: CreateTemplateBodySchema,
        response: { 201: TemplateSchema, ...errors },
        problems: ['CONTENT_TOO_LONG'],
      },
    },
    async (request, reply) => {
      const identity = request.caller
      assertContentFits(request.body.content)
      const record = await insertTemplate(request.db, {
        ...request.body,
        tenantId: identity.tenantId,
        createdBy: identity.userId,
      })
      await request.audit({ type: 'TEMPLATE_CREATED', targetId: record.id, details: { name: record.name } })
      return reply.code(201).send(toTemplate(record))
    },
  )

  app.patch(
    '/:id',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'templates:write' } },
      schema: {
        operationId: 'updateSmsTemplate',
        summary: 'Change a template (creator, OWNER or MANAGER) at the version you read',
        tags: ['sms-templates'],
        params: TemplateIdParamsSchema,
        body: UpdateTemplateBodySchema,
        response: { 200: TemplateSchema, ...targetErrors, 409: ProblemSchema },
        problems: ['CONTENT_TOO_LONG', 'TEMPLATE_NOT_FOUND', 'VERSION_CONFLICT'],
      },
    },
    async (request) => {
      const { version, ...changes } = request.body
      assertSomethingChanges(changes)
      assertContentFits(changes.content)
      const editor = editorOf(request.caller)
      const record = await updateTemplate(request.db, request.params.id, version, changes, editor)
      if (!record) return whyUntouched(request.db, request.params.id, editor, version)
      await request.audit({ type: 'TEMPLATE_UPDATED', targetId: record.id, details: { name: record.name, changed: changedFields(changes) } })
      return toTemplate(record)
    },
  )

  app.delete(
    '/:id',
    {
      config: { access: { audience: 'staff', apiKeyScope: 'templates:write' } },
      schema: {
        operationId: 'deleteSmsTemplate',
        summary: 'Delete a template (creator, OWNER or MANAGER)',
        tags: ['sms-templates'],
        params: TemplateIdParamsSchema,
        response: { 204: Type.Null(), ...targetErrors },
        problems: ['TEMPLATE_NOT_FOUND'],
      },
    },
    async (request, reply) => {
      const editor = editorOf(request.caller)
      const deleted = await deleteTemplate(request.db, request.params.id, editor)
      if (!deleted) return whyUntouched(request.db, request.params.id, editor)
      await request.audit({ type: 'TEMPLATE_DELETED', targetId: deleted.id, details: { name: deleted.name } })
      return reply.code(204).send(null)
    },
  )
}

export default routes
