import { SHARED_RESPONSE_HEADERS } from './response-headers.js'

interface Media {
  schema?: Record<string, unknown>
}
interface Response {
  headers?: Record<string, unknown>
  content?: Record<string, Media>
}
interface Document {
  paths?: Record<string, Record<string, { responses?: Record<string, Response> }>>
  components?: { schemas?: Record<string, unknown>; headers?: Record<string, unknown> }
}

/**
 * @fastify/swagger names a schema after its `$id` only where it is nested (a top-level response schema would be
 * written out in place), so documentRoute hands each success body over as the only member of an `allOf`; that
 * member became a reference, and the wrapper goes again here.
 */
function unwrapSingleAllOf(media: Media): void {
  const schema = media.schema
  if (schema && Object.keys(schema).length === 1 && Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    media.schema = schema.allOf[0] as Record<string, unknown>
  }
}

/** The shared response headers become references to their one description under `components.headers`. */
function referenceSharedHeaders(response: Response): void {
  for (const name of Object.keys(response.headers ?? {})) {
    if (Object.hasOwn(SHARED_RESPONSE_HEADERS, name)) response.headers![name] = { $ref: `#/components/headers/${name}` }
  }
}

/** The last step of building the document (`transformObject`): changes only its form, never what it says. */
export function finishDocument<T extends object>(document: T): T {
  const openapi = document as Document
  for (const item of Object.values(openapi.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        Object.values(response.content ?? {}).forEach(unwrapSingleAllOf)
        referenceSharedHeaders(response)
      }
    }
  }
  const components = (openapi.components ??= {})
  components.headers = { ...components.headers, ...SHARED_RESPONSE_HEADERS }
  // Sorted by name, so the document reads (and diffs) the same whatever order routes were registered in.
  components.schemas = Object.fromEntries(Object.entries(components.schemas ?? {}).sort(([a], [b]) => a.localeCompare(b)))
  return document
}
