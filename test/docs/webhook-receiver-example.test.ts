import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signedHeaders } from '../../lib/events/signature.js'
import { newSigningSecret } from '../../lib/events/signing-secret.js'

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/webhook-receiver.mjs', import.meta.url))
const API_DOC = fileURLToPath(new URL('../../docs/api.md', import.meta.url))

/** The js block of docs/api.md#events that a reader copies. */
function documentedReceiver(): string {
  const doc = readFileSync(API_DOC, 'utf8')
  const section = doc.indexOf('## Events\n')
  const open = doc.indexOf('```js\n', section)
  return doc.slice(open + '```js\n'.length, doc.indexOf('\n```\n', open) + 1)
}

/** A port nothing listens on now: the kernel picks it, the probe gives it back. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

const BODY = JSON.stringify({
  type: 'sms.message.completed',
  timestamp: '2026-11-28T09:00:03.120Z',
  data: { messageId: 42, status: 'PARTIAL', purpose: 'INFORMATIONAL', recipientCount: 30, successCount: 28, failCount: 2, optedOutCount: 0 },
})

// The documented receiver, run as a reader would run it, against requests signed by the service's own signing code
// (lib/events/signature.ts): what the docs promise is what the service sends.
describe('docs/examples/webhook-receiver.mjs: a receiver verifying the service signature', () => {
  const secret = newSigningSecret()
  let receiver: ChildProcessWithoutNullStreams
  let url: string
  let output = ''

  beforeAll(async () => {
    const port = await freePort()
    url = `http://127.0.0.1:${port}/hooks/sms`
    receiver = spawn(process.execPath, [EXAMPLE], { env: { ...process.env, SVC_WEBHOOK_SECRET: secret, PORT: String(port) } })
    receiver.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    // Up once it answers (a bad request is enough to know it listens).
    for (let tries = 0; ; tries++) {
      const ready = await fetch(url, { method: 'POST', body: '{}' }).then(() => true, () => false)
      if (ready) break
      if (tries > 100) throw new Error('the example receiver did not start')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })
  afterAll(() => {
    receiver?.kill()
  })

  const deliver = (headers: Record<string, string>, body = BODY) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })

  it('is the code docs/api.md shows', () => {
    expect(readFileSync(EXAMPLE, 'utf8')).toBe(documentedReceiver())
  })

  it('accepts an event signed by the service, once per webhook-id', async () => {
    const headers = signedHeaders(secret, 'msg_2f1c0a9b7e5d4c3b2a1908f7e6d5c4b3', Math.floor(Date.now() / 1000), BODY)
    expect((await deliver(headers)).status).toBe(204)
    expect((await deliver(headers)).status).toBe(204)
    expect(output.match(/message 42: 28 of 30 delivered/g)).toHaveLength(1)
  })

  it('refuses a changed body, another secret and a stale timestamp', async () => {
    const now = Math.floor(Date.now() / 1000)
    const genuine = signedHeaders(secret, 'msg_a', now, BODY)
    expect((await deliver(genuine, BODY.replace('"successCount":28', '"successCount":30'))).status).toBe(400)
    expect((await deliver(signedHeaders(newSigningSecret(), 'msg_b', now, BODY))).status).toBe(400)
    expect((await deliver(signedHeaders(secret, 'msg_c', now - 3600, BODY))).status).toBe(400)
  })
})
