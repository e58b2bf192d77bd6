import { Type, type Static } from '@sinclair/typebox'
import { MinimalUserSchema, UserResponseSchema } from '../../lib/sign-in/user-response.js'
import { UNSAFE_TEXT_CLASS } from '../../lib/tenancy/identifiers.js'
import { MfaMethodSchema } from './login-mfa.schemas.js'

// PostgreSQL text cannot hold NUL, and no identifier or name needs a control character: refusing them here keeps
// such input a 400 instead of a database error.
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$'
// New login ids and names also refuse format (zero-width, bidi) and unassigned characters; login
// accepts any id that may already exist.
const NewLoginId = Type.String({ minLength: 1, maxLength: 50, pattern: `^[^\\s${UNSAFE_TEXT_CLASS}]+$` })
const LoginId = Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$' })
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: `^(?=.*\\S)[^${UNSAFE_TEXT_CLASS}]+$` })
// The policy (lib/account-security/password/password-policy.ts) judges the content; the schema only bounds the size.
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
  {
    additionalProperties: false,
    examples: [
      {
        tenantSlug: 'demo-academy',
        userLoginId: 'demo-student-6',
        password: 'Academy-Student-26',
        name: 'Choi Student',
        phone: '010-3000-0006',
      },
    ],
  },
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
  {
    additionalProperties: false,
    examples: [
      {
        instituteName: 'Demo Academy',
        businessRegistrationNumber: '124-81-00998',
        userLoginId: 'demo-owner',
        password: 'Academy-Owner-26',
        name: 'Kim Owner',
      },
    ],
  },
)
export type OwnerRegistrationBody = Static<typeof OwnerRegistrationSchema>

export const LoginSchema = Type.Object(
  {
    userLoginId: LoginId,
    password: Type.String({ minLength: 1, maxLength: 1000 }),
    customId: Type.Optional(Type.String({ minLength: 1, maxLength: 20, pattern: NO_CONTROL })),
  },
  { additionalProperties: false, examples: [{ userLoginId: 'demo-owner', password: 'Academy-Owner-26', customId: 'DEMO2026' }] },
)
export type LoginBody = Static<typeof LoginSchema>

const lifetimes = {
  accessExpiresIn: Type.Integer({ description: 'seconds', examples: [3600] }),
  refreshExpiresIn: Type.Integer({ description: 'seconds', examples: [604_800] }),
}

export const RegisteredResponseSchema = Type.Object({ ...lifetimes, user: UserResponseSchema }, { $id: 'RegisterResponse' })
export const LoginResponseSchema = Type.Object({ ...lifetimes, user: MinimalUserSchema }, { $id: 'LoginResponse' })
/** The password step's answer for a user with a second factor: no session yet, and what the second step may use. */
export const MfaRequiredResponseSchema = Type.Object(
  {
    mfaRequired: Type.Literal(true),
    methods: Type.Array(MfaMethodSchema, {
      description: 'what POST /v1/login/mfa accepts for this user; SMS needs a code sent by POST /v1/login/mfa/sms first',
    }),
    expiresIn: Type.Integer({ description: 'seconds the second step may take (the svc_mfa_token cookie lives as long)' }),
  },
  { $id: 'MfaRequiredResponse', examples: [{ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'], expiresIn: 300 }] },
)

export const RefreshResponseSchema = Type.Object({ ...lifetimes, user: Type.Null() }, { $id: 'RefreshResponse' })

// Declared for the document; an absent or unknown value is not refused: the User-Agent then decides the category.
export const ClientHeadersSchema = Type.Object({
  'x-device-category': Type.Optional(
    Type.String({
      description:
        "The session's device category: WEB, MOBILE, TABLET or DESKTOP, in any case. One session is kept per category " +
        '(a new login replaces the earlier one of the same kind). Without it, or with another value, the User-Agent decides.',
      examples: ['MOBILE'],
    }),
  ),
})
