import { describe, expect, it } from 'vitest'
import { addressBudget } from '../../lib/sign-in/address-budget.js'

/**
 * One IPv6 subscriber is handed a whole /64 and may pick any address in it, so a budget per IPv6 address is a budget
 * per request. The key is the /64; IPv4 (mapped into IPv6 by a dual-stack socket or not) stays one address.
 */
describe('addressBudget', () => {
  it('gives every address of one IPv6 /64 the same key, however the address is written', () => {
    const keys = [
      '2001:db8:1:2::1',
      '2001:db8:1:2:ffff:ffff:ffff:ffff',
      '2001:0DB8:0001:0002:0:0:0:42',
      '2001:db8:1:2:a:b:c:d',
      '2001:db8:1:2::1.2.3.4',
    ].map((ip) => addressBudget(ip, 10).key)
    expect(new Set(keys).size).toBe(1)
  })

  it('keeps neighbouring IPv6 /64s apart', () => {
    expect(addressBudget('2001:db8:1:2::1', 10).key).not.toBe(addressBudget('2001:db8:1:3::1', 10).key)
    expect(addressBudget('::1', 10).key).not.toBe(addressBudget('1::1', 10).key)
  })

  it('keys IPv4 per address, the same whether or not it arrives mapped into IPv6', () => {
    expect(addressBudget('::ffff:192.0.2.7', 10).key).toBe(addressBudget('192.0.2.7', 10).key)
    expect(addressBudget('::FFFF:c000:0207', 10).key).toBe(addressBudget('192.0.2.7', 10).key)
    expect(addressBudget('192.0.2.7', 10).key).not.toBe(addressBudget('192.0.2.8', 10).key)
  })
})
