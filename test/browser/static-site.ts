import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SITE_DIR = fileURLToPath(new URL('./site/', import.meta.url))
const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' }

export interface StaticSite {
  port: number
  /** `http://<host>:<port>`: 127.0.0.1 and localhost are the same server but different sites to a browser. */
  origin(host?: '127.0.0.1' | 'localhost'): string
  close(): Promise<void>
}

/** Serves the files of test/browser/site by name (nothing else) on 127.0.0.1 and a free port. */
export async function startStaticSite(): Promise<StaticSite> {
  const files = new Map(
    readdirSync(SITE_DIR).map((name) => [
      `/${name}`,
      { body: readFileSync(join(SITE_DIR, name)), type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream' },
    ]),
  )
  const server = createServer((request, response) => {
    const file = files.get(new URL(request.url ?? '/', 'http://site').pathname)
    if (!file) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store' }).end(file.body)
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo
  return {
    port,
    origin: (host = '127.0.0.1') => `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
