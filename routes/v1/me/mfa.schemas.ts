import { Type } from '@sinclair/typebox'
import { CODE_PATTERN } from '../../../lib/account-security/codes/codes.js'

/** The current password, which every change of a factor asks for (the route's proof in routes/v1/me/mfa.ts). */
export const PasswordProofSchema = Type.Object(
  { password: Type.String({ minLength: 1, maxLength: 1000, description: 'your current password' }) },
  { additionalProperties: false, examples: [{ password: 'Academy-Owner-26' }] },
)

export const FactorStatusSchema = Type.Object(
  {
    totp: Type.Boolean({ description: 'an authenticator app is enabled (a pending enrolment is not)' }),
    sms: Type.Boolean({ description: 'codes by SMS to the verified phone are enabled' }),
    recoveryCodesLeft: Type.Integer({ minimum: 0, description: 'unused recovery codes' }),
  },
  { $id: 'MfaStatus', examples: [{ totp: true, sms: false, recoveryCodesLeft: 10 }] },
)

export const TotpEnrolmentSchema = Type.Object(
  {
    secret: Type.String({ description: 'base32, for apps that take the key typed in; shown this once' }),
    otpauthUri: Type.String({ description: 'otpauth://totp/... for authenticator apps (SHA1, 6 digits, 30 s)' }),
    qrCode: Type.String({ description: 'the URI as a QR code: an SVG data URL, for an <img src>' }),
  },
  {
    $id: 'TotpEnrolment',
    examples: [
      {
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        otpauthUri: 'otpauth://totp/Demo%20Academy:demo-owner?issuer=Demo%20Academy&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30',
        qrCode: 'data:image/svg+xml;base64,PHN2Zy...',
      },
    ],
  },
)

export const TotpConfirmationSchema = Type.Object(
  { code: Type.String({ pattern: CODE_PATTERN, description: 'the six digits the app shows now' }) },
  { additionalProperties: false, examples: [{ code: '042917' }] },
)

export const RecoveryCodesSchema = Type.Object(
  {
    recoveryCodes: Type.Array(Type.String(), {
      minItems: 10,
      maxItems: 10,
      description: 'ten single-use codes, shown this once: each passes the second step in place of a factor',
    }),
  },
  {
    $id: 'RecoveryCodes',
    examples: [
      {
        recoveryCodes: [
          'k7m2p-x9qrt', 'a3bcd-efg45', 'h8nvw-2ks7m', 'p4xzr-q9tbe', 'm6cfy-w3ahn',
          'z2dqk-7vpex', 'e9rts-b5mcu', 'w7hgn-k2zqa', 'c3pyf-6xdtm', 'u8aqe-r4wzs',
        ],
      },
    ],
  },
)
