import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readDataKeys } from '../../../lib/data-keys/setting.js'
import { loadEnv } from '../../../lib/env.js'
import { configProblems } from '../../support/config-problems.js'
import { dataKeysSetting, newDataKey, spellings } from './keys.js'

const JWT_SECRET = 'a-jwt-secret-of-at-least-thirty-two-chars!'
const dir = mkdtempSync(join(tmpdir(), 'svc-data-keys-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('SVC_DATA_KEYS', () => {
  it('reads a JSON array of {kid, key}, in order, from the text or from a file: path', () => {
    const [k1, k2] = [newDataKey('k1'), newDataKey('k2')]
    const path = join(dir, 'keys.json')
    writeFileSync(path, dataKeysSetting(k2, k1))
    for (const [setting, order] of [[dataKeysSetting(k1, k2), [k1, k2]], [`file:${path}`, [k2, k1]]] as const) {
      const read = readDataKeys(setting, null)
      expect('keys' in read && read.keys.map(({ kid, key }) => ({ kid, key: key!.toString('base64') }))).toEqual(order)
    }
    expect(loadEnv({ SVC_DATA_KEYS: `file:${path}` }).SVC_DATA_KEYS).toBe(`file:${path}`)
    // base64url is base64 too.
    expect(configProblems({ SVC_DATA_KEYS: JSON.stringify([{ kid: 'u', key: Buffer.alloc(32, 0xfb).toString('base64url') }]) })).toEqual([])
  })

  it('takes an entry {kid} without key for the key of SVC_JWT_SECRET (jwt) or SVC_OTP_SECRET (default), where that is set', () => {
    const k2 = newDataKey('k2')
    expect(configProblems({ SVC_DATA_KEYS: dataKeysSetting({ kid: 'jwt' }, k2), SVC_JWT_SECRET: JWT_SECRET })).toEqual([])
    expect(configProblems({ SVC_DATA_KEYS: dataKeysSetting(k2, { kid: 'default' }), SVC_OTP_SECRET: 'o'.repeat(32) })).toEqual([])
    expect(configProblems({ SVC_DATA_KEYS: dataKeysSetting({ kid: 'jwt' }, k2) })).toEqual([
      'SVC_DATA_KEYS: key 1 (kid "jwt"): names the key of SVC_JWT_SECRET, which is unset',
    ])
    expect(configProblems({ SVC_DATA_KEYS: dataKeysSetting({ kid: 'jwt' }), SVC_JWT_SECRET: JWT_SECRET, SVC_OTP_SECRET: 'o'.repeat(32) })).toEqual([
      'SVC_DATA_KEYS: key 1 (kid "jwt"): names the key of SVC_JWT_SECRET, which is not this configuration\'s (that is "default")',
    ])
  })

  it('refuses at start what is not a usable key ring, naming the key by position and kid, never by its material', () => {
    const good = newDataKey('good')
    const short = { kid: 'short', key: Buffer.alloc(31, 1).toString('base64') }
    const cases: Array<[string, string]> = [
      ['{"kid":"k1",', 'SVC_DATA_KEYS: not JSON (an array of {"kid", "key"}, or file: and a path to one)'],
      ['[]', 'SVC_DATA_KEYS: needs a non-empty JSON array of {"kid", "key"}, the key that seals first'],
      [JSON.stringify({ kid: 'k1', key: good.key }), 'SVC_DATA_KEYS: needs a non-empty JSON array of {"kid", "key"}, the key that seals first'],
      [dataKeysSetting(good, short), 'SVC_DATA_KEYS: key 2 (kid "short"): a key needs at least 32 bytes (got 31)'],
      [dataKeysSetting(good, { ...newDataKey('good') }), 'SVC_DATA_KEYS: key 2 (kid "good"): kid used twice'],
      [dataKeysSetting({ ...newDataKey('jwt') }), 'SVC_DATA_KEYS: key 1 (kid "jwt"): kid "jwt" is the key of SVC_JWT_SECRET: give a new key another kid'],
      [dataKeysSetting({ ...newDataKey('default') }), 'SVC_DATA_KEYS: key 1 (kid "default"): kid "default" is the key of SVC_OTP_SECRET: give a new key another kid'],
      [dataKeysSetting({ ...newDataKey('a.b') }), 'SVC_DATA_KEYS: key 1 (kid "a.b"): needs a kid of 1 to 64 letters, digits, _ or -'],
      [JSON.stringify([{ key: good.key }]), 'SVC_DATA_KEYS: key 1: needs a kid of 1 to 64 letters, digits, _ or -'],
      [JSON.stringify([{ kid: 'k1' }]), 'SVC_DATA_KEYS: key 1 (kid "k1"): needs key, in base64'],
      [JSON.stringify([{ kid: 'k1', key: `${good.key}!` }]), 'SVC_DATA_KEYS: key 1 (kid "k1"): needs key, in base64'],
      [JSON.stringify([{ kid: 'k1', key: good.key, kyd: 'x' }]), 'SVC_DATA_KEYS: key 1 (kid "k1"): only kid and key are read (unknown: "kyd")'],
      [JSON.stringify(['k1']), 'SVC_DATA_KEYS: key 1: not a {"kid", "key"} object'],
      [`file:${join(dir, 'missing.json')}`, `SVC_DATA_KEYS: cannot read ${JSON.stringify(join(dir, 'missing.json'))} (ENOENT)`],
    ]
    for (const [setting, problem] of cases) {
      const problems = configProblems({ SVC_DATA_KEYS: setting, PORT: 'eighty' })
      expect({ setting, problems }).toEqual({ setting, problems: ['PORT: Expected integer (got "eighty")', problem] })
      for (const spelling of [...spellings(good), short.key]) expect(problems.join('\n')).not.toContain(spelling)
    }
  })
})
