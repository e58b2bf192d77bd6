import { Type, type Static } from '@sinclair/typebox'
import { TemplateCategorySchema } from '../../../lib/sms/template-response.js'
import { PathIdSchema } from '../../../lib/http/id-schema.js'

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
// No maxLength on purpose: the limit is 2,000 provider bytes (ASCII 1, others 2), checked in the handler, so
// every over-long content answers CONTENT_TOO_LONG however long it is; the 4 MiB body limit bounds the input.
const Content = Type.String({ minLength: 1, pattern: '\\S', description: 'at most 2,000 bytes (ASCII 1, others 2)' })
// The column is a 32-bit integer: a larger value would fail in PostgreSQL instead of in validation.
const Version = Type.Integer({ minimum: 0, maximum: 2_147_483_647 })

export const TemplateIdParamsSchema = Type.Object({
  id: PathIdSchema,
})
export type TemplateIdParams = Static<typeof TemplateIdParamsSchema>

export const CreateTemplateBodySchema = Type.Object(
  { name: Name, content: Content, category: TemplateCategorySchema },
  {
    additionalProperties: false,
    examples: [{ name: 'Class notice', content: 'Hello, guardian of {name}: {className} starts at 4 pm today.', category: 'GENERAL' }],
  },
)
export type CreateTemplateBody = Static<typeof CreateTemplateBodySchema>

export const UpdateTemplateBodySchema = Type.Object(
  {
    name: Type.Optional(Name),
    content: Type.Optional(Content),
    category: Type.Optional(TemplateCategorySchema),
    version: Version,
  },
  { additionalProperties: false, examples: [{ content: 'Hello, guardian of {name}: {className} starts at 5 pm today.', version: 0 }] },
)
export type UpdateTemplateBody = Static<typeof UpdateTemplateBodySchema>

// Unknown query parameters (cache busters and the like) are ignored, as most HTTP APIs do.
export const ListTemplatesQuerySchema = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  category: Type.Optional(TemplateCategorySchema),
})
export type ListTemplatesQuery = Static<typeof ListTemplatesQuerySchema>
