import { Type } from '@sinclair/typebox'
import { PathIdSchema } from '../../lib/http/id-schema.js'
import { Nullable } from '../../lib/http/response-types.js'

// The WebAuthn JSON forms (what PublicKeyCredential.toJSON() gives and parseCreationOptionsFromJSON /
// parseRequestOptionsFromJSON take), shared by enrolment (routes/v1/me/passkeys.ts) and sign-in
// (routes/v1/login-passkey.ts). Binary fields are base64url.

const Base64Url = (maxLength: number, description?: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', ...(description ? { description } : {}) })

// A credential id is at most 1023 bytes (WebAuthn), 1364 characters in base64url.
const CredentialId = Base64Url(1400)
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 })
// Browsers add members as WebAuthn grows (and extensions answer what they like): the inner objects take unknown
// members, the library reads what it knows.
const ExtensionResults = Type.Object({}, { additionalProperties: true })

export const RegistrationResponseSchema = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: Base64Url(8192),
        attestationObject: Base64Url(32_768),
        authenticatorData: Type.Optional(Base64Url(32_768)),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(Base64Url(8192)),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: ExtensionResults,
  },
  { additionalProperties: true, description: 'the registration response, as PublicKeyCredential.toJSON() gives it' },
)

export const AuthenticationResponseSchema = Type.Object(
  {
    id: CredentialId,
    rawId: CredentialId,
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: Base64Url(8192),
        authenticatorData: Base64Url(32_768),
        signature: Base64Url(8192),
        userHandle: Type.Optional(Base64Url(128)),
      },
      { additionalProperties: true },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: ExtensionResults,
  },
  { additionalProperties: true, description: 'the authentication response, as PublicKeyCredential.toJSON() gives it' },
)

const CredentialDescriptor = Type.Object({
  id: Type.String(),
  type: Type.String({ examples: ['public-key'] }),
  transports: Type.Optional(Type.Array(Type.String())),
})

export const CreationOptionsSchema = Type.Object(
  {
    challenge: Type.String({ description: 'base64url; single use, valid 300 s' }),
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }),
    user: Type.Object({
      id: Type.String({ description: 'the user handle, base64url: opaque, no name or login id' }),
      name: Type.String(),
      displayName: Type.String(),
    }),
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.String({ examples: ['public-key'] }) })),
    timeout: Type.Optional(Type.Integer({ description: 'milliseconds' })),
    attestation: Type.Optional(Type.String()),
    excludeCredentials: Type.Optional(Type.Array(CredentialDescriptor, { description: 'your passkeys, so one authenticator is not enrolled twice' })),
    authenticatorSelection: Type.Optional(
      Type.Object({
        residentKey: Type.Optional(Type.String()),
        requireResidentKey: Type.Optional(Type.Boolean()),
        userVerification: Type.Optional(Type.String()),
      }),
    ),
    extensions: Type.Optional(Type.Object({ credProps: Type.Optional(Type.Boolean()) })),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    $id: 'PasskeyCreationOptions',
    examples: [
      {
        challenge: 'm1m4l2Jp3wB8t0b1yP9Zr0rB3r8hY2V1y6dQ0k6H5nU',
        rp: { name: 'svc', id: 'academy.example' },
        user: { id: 'AAAAAAAAAAEAAAAAAAAAAQ', name: 'demo-owner', displayName: 'Kim Owner' },
        pubKeyCredParams: [
          { alg: -8, type: 'public-key' },
          { alg: -7, type: 'public-key' },
          { alg: -257, type: 'public-key' },
        ],
        timeout: 300000,
        attestation: 'none',
        excludeCredentials: [],
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        extensions: { credProps: true },
        hints: [],
      },
    ],
  },
)

export const SignInOptionsSchema = Type.Object(
  {
    challengeId: Type.String({ format: 'uuid', description: 'send it back with the assertion (POST /v1/login/passkey)' }),
    challenge: Type.String({ description: 'base64url; single use, valid 300 s' }),
    rpId: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(Type.Array(CredentialDescriptor, { maxItems: 0, description: 'empty: the authenticator offers its passkeys for this site' })),
    timeout: Type.Optional(Type.Integer({ description: 'milliseconds' })),
    userVerification: Type.Optional(Type.String({ description: 'always required' })),
    extensions: Type.Optional(Type.Object({})),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    $id: 'PasskeySignInOptions',
    examples: [
      {
        challengeId: '0b9e4f0e-4a65-4d0c-9f5e-2f1a7c3d8e21',
        challenge: 'a7Yk3vQn1s0cW2pXr8LmT5eH9uJ4bZ6dF0gN2yC8iKo',
        rpId: 'academy.example',
        allowCredentials: [],
        timeout: 300000,
        userVerification: 'required',
      },
    ],
  },
)

export const PasskeySignInSchema = Type.Object(
  {
    challengeId: Type.String({ format: 'uuid' }),
    response: AuthenticationResponseSchema,
  },
  { additionalProperties: false },
)

const PasskeyName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$' })

export const PasskeyEnrolmentSchema = Type.Object(
  {
    name: Type.Optional(PasskeyName),
    password: Type.String({ minLength: 1, maxLength: 1000, description: 'your current password' }),
    response: RegistrationResponseSchema,
  },
  { additionalProperties: false },
)

export const PasskeyRenameSchema = Type.Object({ name: PasskeyName }, { additionalProperties: false, examples: [{ name: 'Work laptop' }] })

export const PasskeySchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'Passkey', examples: [{ id: 7, name: 'Phone', createdAt: '2026-11-29T10:00:00.000Z', lastUsedAt: null }] },
)

export const PasskeyListSchema = Type.Object({ items: Type.Array(PasskeySchema) }, { $id: 'PasskeyList' })

export const PasskeyIdParamsSchema = Type.Object({ id: PathIdSchema })
