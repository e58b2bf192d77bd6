import net from 'node:net'

export interface TcpProxy {
  readonly port: number
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string
  /** Stops forwarding in both directions and holds new connections: a database that no longer answers. */
  freeze(): void
  /**
   * Destroys every live connection and closes each new one as soon as it arrives, until thaw: a database that went
   * away (a restart, a cut network). The client learns it at once, unlike freeze, where it waits for its time limits.
   */
  cut(): void
  /** Forwards again, including what was held; ends a cut. */
  thaw(): void
  /** Stops forwarding the server's answers only; what the client sends still reaches the server. */
  holdReplies(): void
  /** Forwards the answers held since holdReplies, at once: the client reads them together. */
  releaseReplies(): void
  close(): Promise<void>
}

/** A loopback TCP proxy to `target` (host:port) that a test can freeze, to play a frozen or black-holed server. */
export async function startTcpProxy(target: { host: string; port: number }, options: { frozen?: boolean } = {}): Promise<TcpProxy> {
  let frozen = options.frozen ?? false
  let cut = false
  const sockets = new Set<net.Socket>()
  const upstreams = new Set<net.Socket>()
  const held: Array<() => void> = []

  const server = net.createServer((client) => {
    if (cut) {
      client.destroy()
      return
    }
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => client.destroy())
    const connect = () => {
      const upstream = net.connect(target.port, target.host)
      sockets.add(upstream)
      upstreams.add(upstream)
      upstream.on('close', () => {
        sockets.delete(upstream)
        upstreams.delete(upstream)
        client.destroy()
      })
      upstream.on('error', () => upstream.destroy())
      client.on('close', () => upstream.destroy())
      client.pipe(upstream)
      upstream.pipe(client)
      if (frozen) {
        client.pause()
        upstream.pause()
      }
    }
    if (frozen) {
      client.pause()
      held.push(connect)
    } else connect()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port

  return {
    port,
    through(url) {
      const parsed = new URL(url)
      parsed.hostname = '127.0.0.1'
      parsed.port = String(port)
      return parsed.toString()
    },
    freeze() {
      frozen = true
      for (const socket of sockets) socket.pause()
    },
    cut() {
      cut = true
      held.length = 0
      for (const socket of sockets) socket.destroy()
    },
    thaw() {
      cut = false
      frozen = false
      for (const socket of sockets) socket.resume()
      for (const connect of held.splice(0)) connect()
    },
    holdReplies() {
      for (const upstream of upstreams) upstream.pause()
    },
    releaseReplies() {
      for (const upstream of upstreams) upstream.resume()
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      held.length = 0
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
