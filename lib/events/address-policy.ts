import { BlockList, isIP } from 'node:net'
import { ipv6Groups } from '../net/ipv6-groups.js'

/**
 * Where the service refuses to send a tenant's webhook (SSRF): its own machine, the private networks it may sit in,
 * and addresses that are no host at all. Checked when the URL is set and again against the address each delivery
 * resolves to (a name can point elsewhere by then), unless SVC_WEBHOOK_ALLOW_PRIVATE=true.
 */
const refused = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT, shared
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  refused.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // NAT64 for local use: a translator of the operator's own network, wherever it maps to
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local: deprecated, still routed inside some networks
  ['ff00::', 8], // multicast
] as const) {
  refused.addSubnet(network, prefix, 'ipv6')
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`

/**
 * The IPv4 addresses an IPv6 address of a transition form carries, each of which the IPv4 rules must pass: the
 * packets end up at that IPv4 host (a translator or relay on the way unwraps them), so `::ffff:127.0.0.1` is loopback
 * and `2002:a00:1::` a private network.
 */
function embeddedIpv4(address: string): string[] {
  const g = ipv6Groups(address)
  const zero = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  // IPv4-compatible ::a.b.c.d, IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d
  if (zero(0, 4) && ((g[4] === 0 && (g[5] === 0 || g[5] === 0xffff)) || (g[4] === 0xffff && g[5] === 0))) return [ipv4Of(g[6]!, g[7]!)]
  // NAT64, well-known prefix 64:ff9b::/96
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [ipv4Of(g[6]!, g[7]!)]
  // 6to4 2002::/16: the IPv4 address follows the prefix
  if (g[0] === 0x2002) return [ipv4Of(g[1]!, g[2]!)]
  // Teredo 2001::/32: the server's address, and the client's (the last 32 bits, inverted)
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2]!, g[3]!), ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)]
  return []
}

/** Whether a webhook may be sent to this literal address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !refused.check(address, 'ipv4')
  if (family !== 6) return false
  return !refused.check(address.replace(/%.*$/, ''), 'ipv6') && embeddedIpv4(address).every(isPublicAddress)
}
