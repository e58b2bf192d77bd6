import type { FastifyInstance } from 'fastify'
import { afterAll, expect } from 'vitest'
import type { ErrorCode } from '../../lib/errors.js'
import { problemCodesOf, problemStatusOf } from '../../lib/openapi/problem-codes.js'

const undocumented = new Set<string>()

function problemCode(payload: unknown): unknown {
  try {
    return typeof payload === 'string' ? (JSON.parse(payload) as { code?: unknown }).code : undefined
  } catch {
    return undefined
  }
}

/**
 * Keeps the OpenAPI document's problem codes true: every problem a documented operation answers in any test must be
 * one its operation lists (lib/openapi/problem-codes.ts). Routes without an operationId (test-only routes, the
 * hidden ones) and answers outside any route (404, 405) are not operations of the document.
 */
export function watchDocumentedProblems(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions
    if (!route.schema?.operationId || !String(reply.getHeader('content-type') ?? '').startsWith('application/problem+json')) return payload
    const code = problemCode(payload)
    const listed: unknown[] = problemCodesOf({ method: route.method, url: route.url ?? request.url, config: route.config, schema: route.schema })
    // Listed, and at the status the document gives it (a route may answer a code with another status than the catalog's).
    const documented = listed.includes(code) && problemStatusOf({ schema: route.schema }, code as ErrorCode) === reply.statusCode
    if (!documented) undocumented.add(`${route.schema.operationId} (${request.method} ${route.url}) answered ${String(code)} with ${reply.statusCode}`)
    return payload
  })
}

// Registered at import, so it runs once per test file, after that file's tests.
afterAll(() => {
  const found = [...undocumented]
  undocumented.clear()
  expect(found, "problems the OpenAPI document does not list for their operation: add each to the route's schema.problems").toEqual([])
})
