import { BlockList, isIP } from 'node:net'

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
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  refused.addSubnet(network, prefix, 'ipv6')
}

/** An IPv4 address carried inside an IPv6 one (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::`), else null. */
function embeddedIpv4(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) ?? /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address)
  if (!hex) return null
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)]
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
}

/** Whether a webhook may be sent to this literal address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !refused.check(address, 'ipv4')
  if (family !== 6) return false
  const inner = embeddedIpv4(address)
  if (inner !== null) return isPublicAddress(inner)
  return !refused.check(address, 'ipv6')
}
