import { Type, type Static } from '@sinclair/typebox'
import { StringEnum } from '../../lib/http/response-types.js'
import { CODE_PATTERN } from '../../lib/account-security/codes/codes.js'

// The account is named as login names it (routes/v1/auth.schemas.ts): any id that may exist, and customId for the
// portal entry. PostgreSQL text cannot hold NUL, so control characters are refused here, as 400s.
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$'
const LoginId = Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$' })
const CustomId = Type.String({ minLength: 1, maxLength: 20, pattern: NO_CONTROL })

export const ForgotPasswordSchema = Type.Object(
  { userLoginId: LoginId, customId: Type.Optional(CustomId) },
  { additionalProperties: false, examples: [{ userLoginId: 'demo-student-4', customId: 'DEMO2026' }] },
)
export type ForgotPassword = Static<typeof ForgotPasswordSchema>

export const PasswordResetRequestedSchema = Type.Object(
  { expiresIn: Type.Integer({ description: 'seconds a code, if one was sent, stays valid' }) },
  { $id: 'PasswordResetRequested', examples: [{ expiresIn: 300 }] },
)

const SecondFactorSchema = Type.Object(
  {
    method: StringEnum(['TOTP', 'RECOVERY_CODE']),
    code: Type.String({ minLength: 1, maxLength: 64, pattern: NO_CONTROL }),
  },
  { additionalProperties: false, description: 'only for an account with a second factor (MFA_REQUIRED without it)' },
)

export const ResetPasswordSchema = Type.Object(
  {
    userLoginId: LoginId,
    customId: Type.Optional(CustomId),
    code: Type.String({ pattern: CODE_PATTERN, description: 'the six digits of the SMS' }),
    // The policy (lib/account-security/password/password-policy.ts) judges the content; the schema only bounds the size.
    newPassword: Type.String({ minLength: 1, maxLength: 200 }),
    secondFactor: Type.Optional(SecondFactorSchema),
  },
  {
    additionalProperties: false,
    examples: [{ userLoginId: 'demo-student-4', customId: 'DEMO2026', code: '042917', newPassword: 'Spring-Term-Notices-27' }],
  },
)
export type ResetPassword = Static<typeof ResetPasswordSchema>
