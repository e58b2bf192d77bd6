import { Type, type Static } from '@sinclair/typebox'
import { MinimalUserSchema, UserResponseSchema } from '../../lib/auth/user-response.js'
import { UNSAFE_TEXT_CLASS } from '../../lib/tenant/identifiers.js'

// PostgreSQL text cannot hold NUL, and no identifier or name needs a control character: refusing them here keeps
// such input a 400 instead of a database error.
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$'
// New login ids and names also refuse format (zero-width, bidi) and unassigned characters; login
// accepts any id that may already exist.
const NewLoginId = Type.String({ minLength: 1, maxLength: 50, pattern: `^[^\\s${UNSAFE_TEXT_CLASS}]+$` })
const LoginId = Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$' })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: `^(?=.*\\S)[^${UNSAFE_TEXT_CLASS}]+$` })
// The policy (lib/auth/password-policy.ts) judges the content; the schema only bounds the size.
const NewPassword = Type.String({ minLength: 1, maxLength: 200 })
// No schema limit: an over-long phone is an invalid phone, INVALID_PHONE_NUMBER like every other.
const Phone = Type.Union([Type.String(), Type.Null()])

export const StudentRegistrationSchema = Type.Object(
  {
    tenantSlug: Type.String({ minLength: 1, maxLength: 63, pattern: NO_CONTROL }),
    userLoginId: NewLoginId,
    password: NewPassword,
    name: Name,
    phone: Type.Optional(Phone),
  },
  { additionalProperties: false },
)
export type StudentRegistration = Static<typeof StudentRegistrationSchema>

export const OwnerRegistrationSchema = Type.Object(
  {
    instituteName: Name,
    businessRegistrationNumber: Type.String({ minLength: 1, maxLength: 20 }),
    userLoginId: NewLoginId,
    password: NewPassword,
    name: Name,
  },
  { additionalProperties: false },
)
export type OwnerRegistrationBody = Static<typeof OwnerRegistrationSchema>

export const LoginSchema = Type.Object(
  {
    userLoginId: LoginId,
    password: Type.String({ minLength: 1, maxLength: 1000 }),
    customId: Type.Optional(Type.String({ minLength: 1, maxLength: 20, pattern: NO_CONTROL })),
  },
  { additionalProperties: false },
)
export type LoginBody = Static<typeof LoginSchema>

const lifetimes = {
  accessExpiresIn: Type.Integer({ description: 'seconds' }),
  refreshExpiresIn: Type.Integer({ description: 'seconds' }),
}

export const RegisteredResponseSchema = Type.Object({ ...lifetimes, user: UserResponseSchema })
export const LoginResponseSchema = Type.Object({ ...lifetimes, user: MinimalUserSchema })
export const RefreshResponseSchema = Type.Object({ ...lifetimes, user: Type.Null() })
