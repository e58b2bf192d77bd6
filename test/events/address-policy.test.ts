import { describe, expect, it } from 'vitest'
import { isPublicAddress } from '../../lib/events/address-policy.js'

const PUBLIC_IPV4 = '93.184.216.34'
/** One of each refused kind: loopback, private, link-local (cloud metadata), private. */
const REFUSED_IPV4 = ['127.0.0.1', '10.1.2.3', '169.254.169.254', '192.168.1.1']

/** The two 16-bit groups of an IPv4 address, in hex; `invert` as Teredo writes its client. */
function groups(ipv4: string, invert = false): [string, string] {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number]
  const mask = invert ? 0xffff : 0
  return [(((a << 8) | b) ^ mask).toString(16), (((c << 8) | d) ^ mask).toString(16)]
}

/** Every IPv6 transition form that carries an IPv4 address, as a function of that address. */
const FORMS: [string, (ipv4: string) => string][] = [
  ['IPv4-compatible (::a.b.c.d)', (ipv4) => `::${ipv4}`],
  ['IPv4-mapped (::ffff:a.b.c.d)', (ipv4) => `::ffff:${ipv4}`],
  ['IPv4-mapped in hex (::ffff:xxxx:xxxx)', (ipv4) => `::ffff:${groups(ipv4).join(':')}`],
  ['IPv4-mapped written out in full', (ipv4) => `0:0:0:0:0:ffff:${groups(ipv4).join(':')}`],
  ['IPv4-translated (::ffff:0:a.b.c.d)', (ipv4) => `::ffff:0:${ipv4}`],
  ['NAT64 (64:ff9b::/96)', (ipv4) => `64:ff9b::${ipv4}`],
  ['NAT64 in hex', (ipv4) => `64:ff9b::${groups(ipv4).join(':')}`],
  ['6to4 (2002::/16)', (ipv4) => `2002:${groups(ipv4).join(':')}::1`],
  ['Teredo client (2001::/32, the last 32 bits inverted)', (ipv4) => `2001:0:${groups(PUBLIC_IPV4).join(':')}::${groups(ipv4, true).join(':')}`],
  ['Teredo server (2001::/32, bits 32 to 63)', (ipv4) => `2001:0:${groups(ipv4).join(':')}::${groups(PUBLIC_IPV4, true).join(':')}`],
]

// An IPv6 address that carries an IPv4 one reaches that IPv4 host through a translator or relay: it follows the IPv4
// rules of the address it carries, whichever way it is written.
describe('the webhook address policy for IPv6 transition forms', () => {
  const refusedCases = FORMS.flatMap(([form, make]) => REFUSED_IPV4.map((ipv4) => [form, ipv4, make(ipv4)] as const))

  it.each(refusedCases)('refuses %s carrying %s (%s)', (_form, _ipv4, address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(FORMS.map(([form, make]) => [form, make(PUBLIC_IPV4)] as const))('allows %s carrying a public address (%s)', (_form, address) => {
    expect(isPublicAddress(address)).toBe(true)
  })

  // The local-use NAT64 prefix translates inside the operator's own network, wherever that maps it: private.
  it.each([...REFUSED_IPV4, PUBLIC_IPV4].map((ipv4) => [ipv4, `64:ff9b:1::${ipv4}`] as const))(
    'refuses the local-use NAT64 prefix 64:ff9b:1::/48 whatever it carries (%s)',
    (_ipv4, address) => {
      expect(isPublicAddress(address)).toBe(false)
    },
  )

  it.each(['fec0::1', 'fec0:1234::5', 'feff:ffff::1'])('refuses site-local %s (fec0::/10) as private', (address) => {
    expect(isPublicAddress(address)).toBe(false)
  })

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450::1'])('still allows the public IPv6 address %s', (address) => {
    expect(isPublicAddress(address)).toBe(true)
  })
})
