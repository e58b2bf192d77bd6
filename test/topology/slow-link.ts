import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A loopback link between one service instance and the fake provider: it records every call it receives, holds it
 * `delayMs`, then forwards it and relays the answer. One link per instance tells which instance handed what to the
 * provider. A call whose caller has gone (the instance was killed while waiting) is still forwarded: the provider
 * received it, as a real provider would have, so the fake accepts and records it.
 */
export interface ReceivedCall {
  at: number
  /** `svcSmsId:svcRecipient` of every message in the call. */
  recipients: string[]
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
      link.received.push({ at: Date.now(), recipients: recipientsOf(body) })
      if (link.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, link.delayMs))
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name)) headers[name] = value
      }
      const answer = await fetch(`${targetUrl}${request.url ?? '/'}`, { method: request.method, headers, body })
      const text = await answer.text()
      if (response.destroyed) return
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
      response.end(text)
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
