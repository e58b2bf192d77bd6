import { isIP } from 'node:net'
import { AppError } from '../errors.js'
import { isPublicAddress } from './address-policy.js'
import type { ResolveHost } from './resolve-host.js'

const MAX_URL_LENGTH = 2000

/** The URL's host as an address or a name: `[::1]` comes bracketed out of the URL parser. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1')
}

function invalid(detail: string): AppError {
  return new AppError('WEBHOOK_URL_INVALID', detail)
}

/**
 * The endpoint URL a tenant may set: absolute `https://` (plain `http://` only with `allowPrivate`), no credentials in
 * it, and a host whose every address is public (lib/events/address-policy.ts) unless `allowPrivate`
 * (SVC_WEBHOOK_ALLOW_PRIVATE). Every address of a name must pass: a name that answers one public and one private
 * address could be delivered to either.
 */
export async function checkEndpointUrl(input: string, allowPrivate: boolean, resolve: ResolveHost): Promise<URL> {
  if (input.length > MAX_URL_LENGTH) throw invalid(`The URL is longer than ${MAX_URL_LENGTH} characters.`)
  let url: URL
  try {
    url = new URL(input)
  } catch {
    throw invalid('The URL is not an absolute URL.')
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(url.protocol)) throw invalid('The URL must start with https://.')
  if (url.username !== '' || url.password !== '') throw invalid('The URL must not carry a user name or password.')
  if (allowPrivate) return url
  const host = hostOf(url)
  const addresses = isIP(host) ? [host] : await resolve(host).catch(() => [])
  if (addresses.length === 0) throw invalid(`The host ${host} does not resolve.`)
  if (!addresses.every(isPublicAddress)) {
    throw invalid('The URL resolves to a loopback, private, link-local or unique-local address.')
  }
  return url
}
