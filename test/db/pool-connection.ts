import type pg from 'pg'

/** Runs `use` on a connection of `pool` and gives the connection back, whatever happens. */
export async function withPoolConnection(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect()
  try {
    await use(client)
  } finally {
    client.release()
  }
}

/** The server's transaction status as its last ReadyForQuery said: 'I' idle, 'T' in a transaction, 'E' aborted. */
export function transactionStatus(client: pg.ClientBase): string {
  return (client as unknown as { getTransactionStatus(): string }).getTransactionStatus()
}
