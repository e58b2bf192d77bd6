import { parseArgs } from 'node:util'
import { generateSigningKey } from '../lib/sign-in/generate-signing-key.js'
import { SIGNING_ALGORITHMS, type SigningAlgorithm } from '../lib/sign-in/signing-keys.js'
import { runScript, UsageError } from './run-script.js'

const USAGE = `usage: npm run -s keys:generate -- [--alg ${SIGNING_ALGORITHMS.join('|')}]`

function algorithmOf(argv: string[]): SigningAlgorithm {
  let alg: string | undefined
  try {
    alg = parseArgs({ args: argv, options: { alg: { type: 'string', default: 'EdDSA' } }, strict: true }).values.alg
  } catch {
    throw new UsageError(USAGE)
  }
  if (!(SIGNING_ALGORITHMS as readonly string[]).includes(alg ?? '')) throw new UsageError(`${USAGE} (got ${JSON.stringify(alg)})`)
  return alg as SigningAlgorithm
}

/**
 * npm run -s keys:generate -- [--alg EdDSA|ES256|RS256|HS256]
 * Prints one new private JWK (random kid, default EdDSA) to add to SVC_JWT_KEYS (docs/operations.md#rotating-signing-keys).
 * Reads no setting and opens no database: it can run anywhere the project is installed.
 */
await runScript(() => generateSigningKey(algorithmOf(process.argv.slice(2))))
