import { describe, expect, it } from 'vitest'
import { readSigningKeys, SIGNING_ALGORITHMS } from '../../lib/sign-in/signing-keys.js'
import { runScriptSource } from '../support/child-processes.js'

/** Runs scripts/keys-generate.ts in its own process, as `npm run -s keys:generate` does after the build. */
const keysGenerate = (args: string[]) => runScriptSource('scripts/keys-generate.ts', args, {})

// Nothing shared between the tests but the script: they run side by side, each mostly a child process starting.
describe.concurrent('npm run -s keys:generate', () => {
  it.each(SIGNING_ALGORITHMS)('prints one private %s JWK that SVC_JWT_KEYS accepts, and nothing else', async (alg) => {
    const run = await keysGenerate(['--alg', alg])

    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout.trim().split('\n')).toHaveLength(1)
    const jwk = JSON.parse(run.stdout) as Record<string, string>
    expect(jwk).toMatchObject({ alg, use: 'sig', kid: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/) })
    const read = readSigningKeys(JSON.stringify({ keys: [jwk] }))
    expect(read).toMatchObject({ keys: [{ kid: jwk.kid, alg }] })
  }, 60_000)

  it('defaults to EdDSA and draws a new kid and key every time', async () => {
    const [first, second] = await Promise.all([keysGenerate([]), keysGenerate([])])
    const [a, b] = [JSON.parse(first.stdout), JSON.parse(second.stdout)] as Array<Record<string, string>>
    expect([a!.alg, a!.crv]).toEqual(['EdDSA', 'Ed25519'])
    expect(a!.kid).not.toBe(b!.kid)
    expect(a!.d).not.toBe(b!.d)
  }, 60_000)

  it.each([[['--alg', 'HS512']], [['--alg', 'none']], [['--bits', '1024']], [['--alg']]])(
    'refuses %j with the usage on stderr, exit 1 and nothing on stdout',
    async (args) => {
      const run = await keysGenerate(args)
      expect(run).toMatchObject({ code: 1, stdout: '' })
      expect(run.stderr).toMatch(/^error: usage: npm run -s keys:generate -- \[--alg EdDSA\|ES256\|RS256\|HS256\]/)
    },
    60_000,
  )
})
