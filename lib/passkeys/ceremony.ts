import { createHash, randomBytes } from 'node:crypto'
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server'
import type { PasskeySettings } from './settings.js'

/**
 * The WebAuthn ceremonies, through @simplewebauthn/server (docs/architecture.md#libraries-and-why says why a library): this
 * file only says what this service asks for. Every check of attestation and assertion (challenge, origin, RP ID hash,
 * user presence and verification, signature, algorithm) is the library's; nothing here parses CBOR or verifies a
 * signature. What it adds: the challenge is compared through its SHA-256, the form the service stores, and the
 * counter rule is the service's (both counters non-zero), for which it reads the counter's four bytes.
 */

/** EdDSA (-8), ES256 (-7), RS256 (-257): offered at creation and the only keys accepted. */
export const PASSKEY_ALGORITHMS = [-8, -7, -257]

export const challengeHash = (challenge: string): string => createHash('sha256').update(challenge, 'utf8').digest('base64url')

/**
 * The WebAuthn user handle of a user: tenant and user id, 16 bytes, no name or login id (the authenticator may show
 * or sync it). A sign-in checks the handle it gets back against the directory's user.
 */
export function userHandle(tenantId: number, userId: number): Uint8Array<ArrayBuffer> {
  const handle = new Uint8Array(new ArrayBuffer(16))
  const view = new DataView(handle.buffer)
  view.setBigUint64(0, BigInt(tenantId))
  view.setBigUint64(8, BigInt(userId))
  return handle
}

export function creationOptions(
  settings: PasskeySettings,
  user: { tenantId: number; userId: number; userLoginId: string; name: string },
  exclude: Array<{ credentialId: string; transports: string[] }>,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: settings.rpName,
    rpID: settings.rpId,
    userName: user.userLoginId,
    userDisplayName: user.name,
    userID: userHandle(user.tenantId, user.userId),
    challenge: randomBytes(32),
    timeout: settings.challengeSeconds * 1000,
    attestationType: 'none',
    excludeCredentials: exclude.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  })
}

export interface VerifiedCreation {
  credentialId: string
  publicKey: Buffer
  counter: number
  transports: string[]
  backedUp: boolean
}

/**
 * A creation response checked against the live challenge: `takeChallenge` receives the challenge's hash and uses it
 * up (true when it was the caller's and live). Null when anything does not verify.
 */
export async function verifyCreation(
  settings: PasskeySettings,
  response: RegistrationResponseJSON,
  takeChallenge: (hash: string) => Promise<boolean>,
): Promise<VerifiedCreation | null> {
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: (challenge) => takeChallenge(challengeHash(challenge)),
      expectedOrigin: settings.origins,
      expectedRPID: settings.rpId,
      requireUserVerification: true,
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    })
    if (!verified.verified) return null
    const { credential, credentialBackedUp } = verified.registrationInfo
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? [],
      backedUp: credentialBackedUp,
    }
  } catch {
    // The library throws for every malformed or unverifiable response; each is the same refusal to the client.
    return null
  }
}

export async function requestOptions(settings: PasskeySettings): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: settings.rpId,
    allowCredentials: [],
    challenge: randomBytes(32),
    timeout: settings.challengeSeconds * 1000,
    userVerification: 'required',
  })
}

/**
 * An assertion checked against a stored passkey and the challenge's stored hash; the new counter when it verifies,
 * else null. The counter rule: refused when both the stored and the presented counter are non-zero and the presented
 * one did not go up (a cloned authenticator); an authenticator that keeps no counter sends 0 and is never refused for it.
 */
export async function verifyAssertion(
  settings: PasskeySettings,
  response: AuthenticationResponseJSON,
  passkey: { credentialId: string; publicKey: Uint8Array; counter: number; transports: string[] },
  storedChallengeHash: string,
  expectedHandle: Uint8Array,
): Promise<{ counter: number } | null> {
  const handle = response.response.userHandle
  if (handle !== undefined && handle !== Buffer.from(expectedHandle).toString('base64url')) return null
  try {
    // The library refuses a counter that did not go up whenever either counter is non-zero; handing it the stored
    // counter only when the presented one is non-zero makes that "both non-zero".
    const presented = presentedCounter(response)
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: (challenge) => challengeHash(challenge) === storedChallengeHash,
      expectedOrigin: settings.origins,
      expectedRPID: settings.rpId,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(passkey.publicKey),
        counter: presented === 0 ? 0 : passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: true,
    })
    return verified.verified && verified.authenticationInfo.userVerified ? { counter: verified.authenticationInfo.newCounter } : null
  } catch {
    return null
  }
}

/** The signature counter in authenticatorData (bytes 33-36, big-endian), or -1 when it is too short to hold one. */
function presentedCounter(response: AuthenticationResponseJSON): number {
  const data = Buffer.from(response.response.authenticatorData, 'base64url')
  return data.length >= 37 ? data.readUInt32BE(33) : -1
}
