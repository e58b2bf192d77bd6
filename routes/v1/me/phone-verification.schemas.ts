import { Type } from '@sinclair/typebox'
import { CODE_PATTERN } from '../../../lib/account-security/codes/codes.js'

export const PhoneVerificationSentSchema = Type.Object(
  {
    expiresIn: Type.Integer({ description: 'seconds the code stays valid' }),
    resendAfter: Type.Integer({ description: 'seconds before a new code may be asked for' }),
  },
  { $id: 'PhoneVerificationSent', examples: [{ expiresIn: 300, resendAfter: 60 }] },
)

/** The route takes no body: the code goes to the phone on the profile. An empty object is accepted as none. */
export const NoBodySchema = Type.Object({}, { additionalProperties: false, description: 'no body: an empty object at most' })

export const PhoneVerificationCodeSchema = Type.Object(
  {
    code: Type.String({ pattern: CODE_PATTERN, description: 'the six digits of the SMS' }),
    password: Type.String({ minLength: 1, maxLength: 1000, description: 'your current password: a session alone cannot prove a new number' }),
  },
  { additionalProperties: false, examples: [{ code: '042917', password: 'Academy-Owner-26' }] },
)
