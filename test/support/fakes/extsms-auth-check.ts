import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * The fake provider's check of `Authorization` (docs/provider.md#authentication), written independently of
 * lib/dispatch/providers/extsms-auth.ts so a bug there cannot hide by being mirrored here.
 */

const HEADER = /^HMAC-SHA256 apiKey=([^,\s]+), date=([^,\s]+), salt=([^,\s]+), signature=([0-9a-f]{64})$/
const MAX_SKEW_MS = 15 * 60 * 1000

export type AuthFailure = 'InvalidAPIKey' | 'SignatureDoesNotMatch' | 'RequestTimeTooSkewed' | 'DuplicatedSignature'

export interface AuthChecker {
  check(header: string | undefined): AuthFailure | null
}

export function createAuthChecker(apiKey: string, apiSecret: string, now: () => Date): AuthChecker {
  const usedSignatures = new Set<string>()
  return {
    check(header) {
      const match = header ? HEADER.exec(header) : null
      if (!match) return header ? 'SignatureDoesNotMatch' : 'InvalidAPIKey'
      const [, key, date, salt, signature] = match as unknown as [string, string, string, string, string]
      if (key !== apiKey) return 'InvalidAPIKey'
      const sentAt = Date.parse(date)
      if (Number.isNaN(sentAt) || Math.abs(now().getTime() - sentAt) > MAX_SKEW_MS) return 'RequestTimeTooSkewed'
      if (salt.length < 12 || salt.length > 64) return 'SignatureDoesNotMatch'
      const expected = createHmac('sha256', apiSecret).update(`${date}${salt}`).digest()
      if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'SignatureDoesNotMatch'
      if (usedSignatures.has(signature)) return 'DuplicatedSignature'
      usedSignatures.add(signature)
      return null
    },
  }
}
