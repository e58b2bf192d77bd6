import { describe, expect, it } from 'vitest'
import { buildTestApp, useTestApp } from '../helper.js'

describe('GET /actuator/health', () => {
  const app = useTestApp()

  it('answers UP when the database answers', async () => {
    const response = await app.current.inject({ method: 'GET', url: '/actuator/health' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'UP' })
  })

  it('answers 503 DOWN when the database does not', async () => {
    const down = await buildTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' })
    try {
      const response = await down.inject({ method: 'GET', url: '/actuator/health' })
      expect(response.statusCode).toBe(503)
      expect(response.json()).toEqual({ status: 'DOWN' })
    } finally {
      await down.close()
    }
  })
})
