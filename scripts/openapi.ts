import { writeFileSync } from 'node:fs'
import { standaloneDocument } from '../lib/openapi/standalone-document.js'

/**
 * npm run -s openapi > openapi.json       or       npm run -s openapi -- openapi.json
 * Writes the OpenAPI document (pretty JSON) to stdout or FILE; needs no database and no running service.
 */
async function main(): Promise<void> {
  const [file, ...rest] = process.argv.slice(2)
  if (rest.length > 0) throw new Error('usage: npm run -s openapi [-- FILE] (stdout without FILE)')
  const document = `${JSON.stringify(await standaloneDocument(), null, 2)}\n`
  if (file) return writeFileSync(file, document)
  // A reader that stops early (`| head`) is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
  process.stdout.write(document)
}

main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = 1
})
