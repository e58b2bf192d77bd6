import bcrypt from 'bcrypt'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from '../../lib/sign-in/password-hash.js'

const COST = 4
const PASSWORD = 'Tr0ub4dor&3x'

async function legacyHash(password: string, prefix: '$2a$' | '$2y$', cost = COST): Promise<string> {
  const hash = await bcrypt.hash(password, await bcrypt.genSalt(cost, 'a'))
  return `${prefix}${hash.slice(4)}`
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('hashPassword and verifyPassword', () => {
  it('round-trips a password at the configured cost', async () => {
    const hash = await hashPassword(PASSWORD, COST)
    expect(hash).toMatch(/^\$2b\$04\$/)
    expect(await verifyPassword(PASSWORD, hash)).toBe(true)
  })

  it('refuses a wrong password', async () => {
    const hash = await hashPassword(PASSWORD, COST)
    expect(await verifyPassword('tr0ub4dor&3x', hash)).toBe(false)
    expect(await verifyPassword('', hash)).toBe(false)
  })

  it('salts every hash', async () => {
    expect(await hashPassword(PASSWORD, COST)).not.toBe(await hashPassword(PASSWORD, COST))
  })

  it('round-trips a Hangul password', async () => {
    const hash = await hashPassword('학원비밀번호2024', COST)
    expect(await verifyPassword('학원비밀번호2024', hash)).toBe(true)
    expect(await verifyPassword('학원비밀번호2025', hash)).toBe(false)
  })

  it('verifies a $2a$ hash from an upgraded database', async () => {
    const hash = await legacyHash(PASSWORD, '$2a$')
    expect(hash).toMatch(/^\$2a\$04\$/)
    expect(await verifyPassword(PASSWORD, hash)).toBe(true)
    expect(await verifyPassword('wrong-password-1', hash)).toBe(false)
  })

  it('verifies a $2y$ hash from an upgraded database', async () => {
    const hash = await legacyHash(PASSWORD, '$2y$')
    expect(hash).toMatch(/^\$2y\$04\$/)
    expect(await verifyPassword(PASSWORD, hash)).toBe(true)
    expect(await verifyPassword('wrong-password-1', hash)).toBe(false)
  })

  it('answers false rather than throwing for a malformed hash', async () => {
    expect(await verifyPassword(PASSWORD, '')).toBe(false)
    expect(await verifyPassword(PASSWORD, 'not-a-hash')).toBe(false)
    expect(await verifyPassword(PASSWORD, '$2b$04$short')).toBe(false)
  })
})

describe('needsRehash', () => {
  it('keeps a $2b$ hash at the configured cost', async () => {
    expect(needsRehash(await hashPassword(PASSWORD, COST), COST)).toBe(false)
  })

  it('keeps a $2b$ hash above the configured cost', async () => {
    expect(needsRehash(await hashPassword(PASSWORD, 5), COST)).toBe(false)
  })

  it('re-hashes a hash below the configured cost', async () => {
    expect(needsRehash(await hashPassword(PASSWORD, COST), 5)).toBe(true)
  })

  it('re-hashes $2a$ and $2y$ hashes even at the configured cost', async () => {
    expect(needsRehash(await legacyHash(PASSWORD, '$2a$'), COST)).toBe(true)
    expect(needsRehash(await legacyHash(PASSWORD, '$2y$'), COST)).toBe(true)
  })

  it('re-hashes anything that is not a bcrypt hash', () => {
    expect(needsRehash('', COST)).toBe(true)
    expect(needsRehash('plain-text', COST)).toBe(true)
    expect(needsRehash('$2b$04$short', COST)).toBe(true)
  })
})

describe('verifyAgainstDummy', () => {
  it('always answers false', async () => {
    expect(await verifyAgainstDummy(PASSWORD, COST)).toBe(false)
    expect(await verifyAgainstDummy('', COST)).toBe(false)
  })

  it('runs a real bcrypt comparison against a hash of the configured cost', async () => {
    const compare = vi.spyOn(bcrypt, 'compare')
    await verifyAgainstDummy(PASSWORD, 5)
    expect(compare).toHaveBeenCalledTimes(1)
    expect(compare.mock.calls[0]?.[0]).toBe(PASSWORD)
    expect(compare.mock.calls[0]?.[1]).toMatch(/^\$2b\$05\$[./A-Za-z0-9]{53}$/)
  })

  it('computes the dummy hash once per cost, even for concurrent callers', async () => {
    const hash = vi.spyOn(bcrypt, 'hash')
    await Promise.all([verifyAgainstDummy('first-1', 6), verifyAgainstDummy('second-2', 6)])
    await verifyAgainstDummy('third-3', 6)
    expect(hash).toHaveBeenCalledTimes(1)

    await verifyAgainstDummy('fourth-4', 7)
    expect(hash).toHaveBeenCalledTimes(2)
  })
})
