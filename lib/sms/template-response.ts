import { Type, type Static } from '@sinclair/typebox'
import type { TemplateRecord } from '../../db/repos/sms/sms-templates.js'
import { StringEnum } from '../http/response-types.js'

export const TEMPLATE_CATEGORIES = ['GENERAL', 'ATTENDANCE', 'PAYMENT', 'EXAM', 'CUSTOM'] as const

export const TemplateCategorySchema = StringEnum(TEMPLATE_CATEGORIES, { $id: 'TemplateCategory' })

// The demo academy's template (README "Try it").
const exampleTemplate = {
  id: 1,
  name: 'Class notice',
  content: 'Hello, guardian of {name}: {className} starts at 4 pm today.',
  category: 'GENERAL',
  version: 0,
  createdBy: 2,
  createdAt: '2026-11-23T09:00:00.000Z',
  updatedAt: '2026-11-23T09:00:00.000Z',
}

/** A template (docs/api.md#templates): content is returned as stored, never rendered. */
export const TemplateSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  content: Type.String(),
  category: TemplateCategorySchema,
  version: Type.Integer(),
  createdBy: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
}, { $id: 'SmsTemplate', examples: [exampleTemplate] })
export type Template = Static<typeof TemplateSchema>

/** A page (docs/api.md#history-paging-and-sorting). */
export const TemplatePageSchema = Type.Object({
  items: Type.Array(TemplateSchema),
  page: Type.Integer(),
  perPage: Type.Integer(),
  total: Type.Integer(),
  totalPages: Type.Integer(),
  hasNext: Type.Boolean(),
}, { $id: 'SmsTemplatePage' })
export type TemplatePage = Static<typeof TemplatePageSchema>

export function toTemplate(record: TemplateRecord): Template {
  return {
    id: record.id,
    name: record.name,
    content: record.content,
    category: record.category,
    version: record.version,
    createdBy: record.createdBy,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  }
}

export function toTemplatePage(records: TemplateRecord[], page: number, perPage: number, total: number): TemplatePage {
  const totalPages = Math.ceil(total / perPage)
  return { items: records.map(toTemplate), page, perPage, total, totalPages, hasNext: page + 1 < totalPages }
}
