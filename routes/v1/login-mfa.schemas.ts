import { Type, type Static } from '@sinclair/typebox'

/** A way to pass the second step (lib/account-security/second-factor/factors.ts MfaMethod), one named schema wherever it appears. */
export const MfaMethodSchema = Type.Union([Type.Literal('TOTP'), Type.Literal('SMS'), Type.Literal('RECOVERY_CODE')], { $id: 'MfaMethod' })

export const MfaAnswerSchema = Type.Object(
  {
    method: MfaMethodSchema,
    code: Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: '^[A-Za-z0-9 -]+$',
      description: 'six digits (TOTP, SMS), or a recovery code as shown (case, spaces and dashes do not matter)',
    }),
  },
  { additionalProperties: false, examples: [{ method: 'TOTP', code: '042917' }] },
)
export type MfaAnswer = Static<typeof MfaAnswerSchema>

export const MfaCodeSentSchema = Type.Object(
  {
    expiresIn: Type.Integer({ description: 'seconds the code stays valid' }),
    resendAfter: Type.Integer({ description: 'seconds before a new code may be asked for' }),
  },
  { $id: 'MfaCodeSent', examples: [{ expiresIn: 300, resendAfter: 60 }] },
)
