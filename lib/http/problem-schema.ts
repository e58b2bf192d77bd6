import { Type, type Static } from '@sinclair/typebox'
import { ERROR_CATALOG, type ErrorCode } from '../errors.js'
import { StringEnum } from './response-types.js'

/** Every code of the catalog, read from it, so the documented enum cannot drift from what the service answers. */
export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[]

export const ProblemCodeSchema = StringEnum(ERROR_CODES, {
  $id: 'ProblemCode',
  description: 'Stable error code from the catalog; each operation lists the codes it can answer',
})

/** The name of the problem body's component in the OpenAPI document. */
export const PROBLEM_SCHEMA_ID = 'Problem'

/** The RFC 9457 body every error response carries (docs/api.md#problem-body). */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: '`urn:svc:error:` and the code in lower case with hyphens' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: ProblemCodeSchema,
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          { field: Type.String(), message: Type.String() },
          { $id: 'ProblemFieldError', description: 'One schema failure: the request part and path, and what is wrong' },
        ),
      ),
    ),
    requestId: Type.Optional(Type.String({ description: 'The X-Request-Id of this answer, for the service logs' })),
  },
  {
    $id: PROBLEM_SCHEMA_ID,
    description: 'application/problem+json',
    examples: [
      {
        type: 'urn:svc:error:validation-failed',
        title: 'Request validation failed',
        status: 400,
        detail: 'body.title must NOT have fewer than 1 characters',
        code: 'VALIDATION_FAILED',
        errors: [{ field: 'body.title', message: 'must NOT have fewer than 1 characters' }],
        requestId: '0b5f6c1e-7d2a-4f43-9a51-2c8e0f9d3b17',
      },
    ],
  },
)

export type Problem = Static<typeof ProblemSchema>
