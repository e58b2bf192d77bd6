/**
 * The eight 16-bit groups of an address `net.isIP` calls IPv6 (`::` expanded, a zone dropped, a trailing dotted IPv4
 * part read as two groups): what the address budget keys by (lib/sign-in/address-budget.ts) and what the webhook
 * address policy reads embedded IPv4 addresses from (lib/events/address-policy.ts).
 */
export function ipv6Groups(ip: string): number[] {
  let text = ip.split('%')[0]!.toLowerCase()
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)))
  const front = parse(head)
  if (tail === undefined) return front
  const back = parse(tail)
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back]
}
