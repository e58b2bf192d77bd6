import { Type, type Static } from '@sinclair/typebox'
import { UNSAFE_TEXT_CLASS } from '../../../lib/tenancy/identifiers.js'

// Name max 100, not blank; no control, format (zero-width, bidi) or unassigned characters.
// The phone (stored as at most 11 national digits) has no schema limit: an over-long one is an invalid phone,
// INVALID_PHONE_NUMBER like every other, judged by lib/account-security/phone/optional-phone.ts.
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: `^(?=.*\\S)[^${UNSAFE_TEXT_CLASS}]+$` })
const Phone = Type.Union([Type.String(), Type.Null()], {
  description: 'null or blank clears the phone; anything else must be a valid number (INVALID_PHONE_NUMBER)',
})

/** Merge-patch semantics: only the fields present change; `{}` changes nothing. */
export const UpdateProfileSchema = Type.Object(
  { name: Type.Optional(Name), phone: Type.Optional(Phone) },
  { additionalProperties: false, examples: [{ name: 'Kim Owner', phone: '010-2026-0001' }] },
)
export type UpdateProfile = Static<typeof UpdateProfileSchema>

export const ChangePasswordSchema = Type.Object(
  {
    currentPassword: Type.String({ minLength: 1, maxLength: 1000 }),
    // The policy (lib/account-security/password/password-policy.ts) judges the content; the schema only bounds the size.
    newPassword: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false, examples: [{ currentPassword: 'Academy-Owner-26', newPassword: 'Spring-Term-Notices-27' }] },
)

export const AvatarSeed = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })

export const UpdateAvatarSchema = Type.Object(
  { avatarSeed: Type.Optional(AvatarSeed) },
  { additionalProperties: false, description: 'omit avatarSeed for a new random seed', examples: [{ avatarSeed: 'q7Hc2LmX9aPe' }, {}] },
)

export const AvatarResponseSchema = Type.Object({ avatarSeed: AvatarSeed }, { $id: 'Avatar', examples: [{ avatarSeed: 'q7Hc2LmX9aPe' }] })
