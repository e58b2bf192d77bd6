import { describe, expect, it } from 'vitest'
import { standaloneDocument } from '../../lib/openapi/standalone-document.js'
import { OPENAPI_PATH } from '../../plugins/swagger.js'
import { useTestApp } from '../helper.js'

describe('npm run openapi (lib/openapi/standalone-document.ts)', () => {
  const app = useTestApp()

  it('writes the document the service serves, built without a database', async () => {
    const served = await app.current.inject({ method: 'GET', url: OPENAPI_PATH })
    expect(await standaloneDocument()).toEqual(served.json())
  })
})
