import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoCBOR } from '@simplewebauthn/server/helpers'

/**
 * A software WebAuthn authenticator for the API tests: real keys made here with node:crypto (ES256 on P-256, EdDSA
 * on Ed25519), real authenticatorData, clientDataJSON and a CBOR attestationObject (fmt `none`), real signatures.
 * Nothing of the service's verification is mocked: what the service checks is what a browser and an authenticator
 * would send. Every field a test wants to get wrong (origin, RP ID, flags, counter, challenge) is a parameter.
 */
export type PasskeyAlgorithm = 'ES256' | 'EdDSA'

const FLAG_UP = 0x01
const FLAG_UV = 0x04
const FLAG_AT = 0x40

export interface CeremonyTweaks {
  origin?: string
  rpId?: string
  /** User verified (default true). */
  userVerified?: boolean
  /** The challenge to sign instead of the one asked for. */
  challenge?: string
  /** The signature counter to report (default: one more than the last). */
  counter?: number
  type?: string
}

export class SoftAuthenticator {
  readonly credentialId: string
  private readonly privateKey: KeyObject
  /** The credential's public key, COSE-encoded, as an authenticator puts it in its attested data. */
  readonly coseKey: Uint8Array
  private counter = 0
  /** The user handle the credential was made for (sent back at sign-in, as a discoverable credential does). */
  userHandle: string | undefined

  constructor(
    readonly algorithm: PasskeyAlgorithm,
    readonly origin: string,
    readonly rpId: string,
    options: { counter?: number; credentialId?: string } = {},
  ) {
    this.counter = options.counter ?? 0
    this.credentialId = options.credentialId ?? randomBytes(32).toString('base64url')
    if (algorithm === 'ES256') {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      const jwk = publicKey.export({ format: 'jwk' })
      this.privateKey = privateKey
      this.coseKey = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, Buffer.from(jwk.x!, 'base64url')],
          [-3, Buffer.from(jwk.y!, 'base64url')],
        ]),
      )
    } else {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519')
      const jwk = publicKey.export({ format: 'jwk' })
      this.privateKey = privateKey
      this.coseKey = isoCBOR.encode(
        new Map<number, number | Uint8Array>([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, Buffer.from(jwk.x!, 'base64url')],
        ]),
      )
    }
  }

  private clientData(type: string, challenge: string, tweaks: CeremonyTweaks): Buffer {
    return Buffer.from(JSON.stringify({ type: tweaks.type ?? type, challenge: tweaks.challenge ?? challenge, origin: tweaks.origin ?? this.origin, crossOrigin: false }))
  }

  private authData(tweaks: CeremonyTweaks, attested: Uint8Array | null): Buffer {
    const rpIdHash = createHash('sha256').update(tweaks.rpId ?? this.rpId).digest()
    const flags = FLAG_UP | (tweaks.userVerified === false ? 0 : FLAG_UV) | (attested ? FLAG_AT : 0)
    const count = Buffer.alloc(4)
    count.writeUInt32BE(tweaks.counter ?? this.counter)
    return Buffer.concat([rpIdHash, Buffer.from([flags]), count, ...(attested ? [attested] : [])])
  }

  /** The registration response (PublicKeyCredential.toJSON()) for creation options. */
  create(options: { challenge: string; user: { id: string } }, tweaks: CeremonyTweaks = {}) {
    this.userHandle = options.user.id
    const id = Buffer.from(this.credentialId, 'base64url')
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(id.length)
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, this.coseKey])
    const authData = this.authData(tweaks, attested)
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never)
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key' as const,
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, tweaks).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    }
  }

  /** The authentication response (PublicKeyCredential.toJSON()) for request options; advances the counter. */
  get(options: { challenge: string }, tweaks: CeremonyTweaks = {}) {
    if (tweaks.counter === undefined) this.counter += 1
    const authData = this.authData(tweaks, null)
    const clientData = this.clientData('webauthn.get', options.challenge, tweaks)
    const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()])
    // ES256: an ASN.1 DER signature, as WebAuthn carries it (node's default for EC keys); EdDSA: the raw 64 bytes.
    const signature = this.algorithm === 'ES256' ? sign('sha256', signed, this.privateKey) : sign(null, signed, this.privateKey)
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key' as const,
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    }
  }
}
