import { lookup } from 'node:dns/promises'

/** Every address a host name resolves to now; tests give the deliverer their own (a name that changes its answer). */
export type ResolveHost = (hostname: string) => Promise<string[]>

export const systemResolve: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address)
