import { Type, type Static } from '@sinclair/typebox'

/** The RFC 9457 body every error response carries (docs/api.md#problem-body). */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    /** The answer's X-Request-Id, for matching a report with the service's log lines. */
    requestId: Type.Optional(Type.String()),
  },
  { description: 'application/problem+json' },
)

export type Problem = Static<typeof ProblemSchema>
