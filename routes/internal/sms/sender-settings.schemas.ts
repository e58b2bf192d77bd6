import { Type, type Static } from '@sinclair/typebox'

export const ApprovalParamsSchema = Type.Object({ tenantSlug: Type.String({ minLength: 1, maxLength: 63 }) })

// registrationStatus is anything here, absent included: a value other than APPROVED or REJECTED is
// APPROVAL_STATUS_INVALID, not a generic schema failure.
export const ApprovalBodySchema = Type.Object(
  {
    registrationStatus: Type.Optional(Type.Unknown({ description: 'APPROVED or REJECTED; anything else APPROVAL_STATUS_INVALID' })),
    rejectionReason: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    senderNumber: Type.Optional(
      Type.String({
        maxLength: 40,
        description:
          "The number the operator reviewed (as `npm run sender:pending` listed it; any written form). Not the tenant's current number: SENDER_NUMBER_CHANGED, and nothing changes.",
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { registrationStatus: 'APPROVED', senderNumber: '0212345678' },
      { registrationStatus: 'REJECTED', rejectionReason: 'Number not owned by the academy', senderNumber: '0212345678' },
    ],
  },
)
export type ApprovalBody = Static<typeof ApprovalBodySchema>
