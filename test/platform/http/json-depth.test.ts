import { describe, expect, it } from 'vitest'
import { nestsDeeperThan } from '../../../lib/http/json-depth.js'

const deeper = (text: string, max: number) => nestsDeeperThan(Buffer.from(text), max)

describe('nestsDeeperThan', () => {
  it('counts arrays and objects together, up to and past the limit', () => {
    expect(deeper('{"a":[{"b":[]}]}', 4)).toBe(false)
    expect(deeper('{"a":[{"b":[[]]}]}', 4)).toBe(true)
    expect(deeper(`${'['.repeat(64)}${']'.repeat(64)}`, 64)).toBe(false)
    expect(deeper(`${'['.repeat(65)}${']'.repeat(65)}`, 64)).toBe(true)
  })

  it('measures depth, not the number of brackets: siblings do not add up', () => {
    expect(deeper(`[${'[],'.repeat(10_000)}[]]`, 2)).toBe(false)
  })

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(deeper(`{"a":"${'['.repeat(100)}"}`, 1)).toBe(false)
    expect(deeper(`{"a":"\\"${'{'.repeat(100)}\\\\"}`, 1)).toBe(false)
    expect(deeper(`["\\\\",[[]]]`, 2)).toBe(true)
  })

  it('reads multi-byte text as it comes', () => {
    expect(deeper('{"이름":"[[[[["}', 1)).toBe(false)
  })
})
