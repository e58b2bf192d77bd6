import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { adminQuery } from '../support/admin-query.js'
import { listeningAddress, startScriptSource } from '../support/child-processes.js'
import { itPostgres } from '../support/helper.js'
import { withDatabase } from '../support/database-url.js'

describe('server.ts', () => {
  // The embedded counterpart is test/platform/embedded.test.ts.
  itPostgres('migrates an empty database at start, serves, and exits cleanly on SIGTERM', async () => {
    const name = `svc_start_${randomBytes(4).toString('hex')}`
    await adminQuery(`create database ${name}`)
    try {
      const server = startScriptSource('server.ts', [], {
        ...process.env,
        NODE_ENV: 'test',
        DATABASE_URL: withDatabase(inject('databaseUrl'), name),
        PORT: '0',
        LOG_LEVEL: 'info',
        SVC_JWT_SECRET: 'server-test-secret-at-least-32-bytes-long',
      })
      const { child } = server
      const address = await listeningAddress(server, 20_000)
      const health = await fetch(`${address}/actuator/health`)
      expect(health.status).toBe(200)

      child.kill('SIGTERM')
      const [code] = await once(child, 'exit')
      expect(code).toBe(0)
      expect(server.output()).toContain('shutting down')

      const migrated = new pg.Client({ connectionString: withDatabase(inject('databaseUrl'), name) })
      await migrated.connect()
      const { rows } = await migrated.query('select name from kysely_migration')
      await migrated.end()
      expect(rows.length).toBeGreaterThan(0)
    } finally {
      await adminQuery(`drop database if exists ${name} with (force)`)
    }
  })

  it('refuses to start with a message naming every bad variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
      env: { ...process.env, NODE_ENV: 'production', PORT: 'abc', SVC_JWT_SECRET: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(1)
    expect(stderr).toContain('PORT:')
    expect(stderr).toContain('SVC_JWT_SECRET or SVC_JWT_KEYS: one is required when NODE_ENV=production')
    expect(stderr).not.toContain('    at ')
  })
})
