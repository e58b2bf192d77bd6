import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A loopback link between one service instance and the fake provider: it records every call it receives, holds it
 * `delayMs`, then forwards it and relays the answer. One link per instance tells which instance handed what to the
 * provider. A call whose caller has gone (the instance was killed while waiting) is still forwarded: the provider
 * received it, as a real provider would have, so the fake lets it take effect (a group sent by a dead instance).
 */
export type LinkPhase = 'create' | 'add' | 'send' | 'read'

export interface ReceivedCall {
  at: number
  /** Which call of the provider's group API this is; null for any other path. */
  phase: LinkPhase | null
  /** The group the path names (null for a create, which has none yet). */
  groupId: string | null
  /** `svcSmsId:svcRecipient` of every message an add call carries (the only call that carries messages). */
  recipients: string[]
  /** The provider's answer reached the caller; false while held, and for good when the caller was gone first. */
  answered: boolean
}

export interface SlowLink {
  url: string
  delayMs: number
  received: ReceivedCall[]
  close(): Promise<void>
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
    // A caller killed in the middle of its body: nothing complete reached the provider.
    request.on('close', () => reject(new Error('caller gone before the end of its body')))
  })
}

/** The group API's calls by method and path (docs/provider.md): create, add (PUT messages), send, read back. */
function callOf(method: string, url: string): Pick<ReceivedCall, 'phase' | 'groupId'> {
  const path = new URL(url, 'http://link').pathname
  if (path === '/messages/v4/groups') return { phase: method === 'POST' ? 'create' : null, groupId: null }
  const match = /^\/messages\/v4\/groups\/([^/]+)(\/messages|\/send)?$/.exec(path)
  if (!match) return { phase: null, groupId: null }
  const groupId = decodeURIComponent(match[1]!)
  if (match[2] === '/messages') return { phase: method === 'PUT' ? 'add' : 'read', groupId }
  if (match[2] === '/send') return { phase: 'send', groupId }
  return { phase: 'read', groupId }
}

function recipientsOf(body: Buffer): string[] {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { messages?: { customFields?: Record<string, string> }[] }
    return (parsed.messages ?? []).map((message) => `${message.customFields?.svcSmsId}:${message.customFields?.svcRecipient}`)
  } catch {
    return []
  }
}

export async function startSlowLink(targetUrl: string): Promise<SlowLink> {
  const pending = new Set<Promise<unknown>>()
  const link: SlowLink = { url: '', delayMs: 0, received: [], close: async () => undefined }

  const server: Server = createServer((request, response) => {
    const work = (async () => {
      const body = await readBody(request)
      const call = callOf(request.method ?? '', request.url ?? '/')
      const received: ReceivedCall = { at: Date.now(), ...call, recipients: call.phase === 'add' ? recipientsOf(body) : [], answered: false }
      link.received.push(received)
      if (link.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, link.delayMs))
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value
      }
      // A read back is a GET, which fetch refuses to give a body, even an empty one.
      const forwarded = request.method === 'GET' || request.method === 'HEAD' ? undefined : body
      const answer = await fetch(`${targetUrl}${request.url ?? '/'}`, { method: request.method, headers, body: forwarded })
      const text = await answer.text()
      if (response.destroyed) return
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
      response.end(text)
      received.answered = true
    })().catch(() => {
      if (!response.headersSent && !response.destroyed) response.writeHead(502).end()
    })
    pending.add(work)
    void work.finally(() => pending.delete(work))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  link.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  link.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    await Promise.allSettled([...pending])
  }
  return link
}
