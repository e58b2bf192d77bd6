import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { itPostgres } from './helper.js'
import { withDatabase } from './database-url.js'

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

describe('server.ts', () => {
  // The embedded counterpart is test/embedded.test.ts.
  itPostgres('migrates an empty database at start, serves, and exits cleanly on SIGTERM', async () => {
    const name = `svc_start_${randomBytes(4).toString('hex')}`
    await adminQuery(`create database ${name}`)
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
        env: {
          ...process.env,
          NODE_ENV: 'test',
          DATABASE_URL: withDatabase(inject('databaseUrl'), name),
          PORT: '0',
          LOG_LEVEL: 'info',
          SVC_JWT_SECRET: 'server-test-secret-at-least-32-bytes-long',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      const address = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000)
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString()
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
          if (match?.[1]) {
            clearTimeout(timer)
            resolve(match[1])
          }
        })
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
        child.once('exit', () => reject(new Error(`server exited early:\n${output}`)))
      })
      const health = await fetch(`${address}/actuator/health`)
      expect(health.status).toBe(200)

      child.kill('SIGTERM')
      const [code] = await once(child, 'exit')
      expect(code).toBe(0)
      expect(output).toContain('shutting down')

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
    expect(stderr).toContain('SVC_JWT_SECRET: required when NODE_ENV=production')
    expect(stderr).not.toContain('    at ')
  })
})
