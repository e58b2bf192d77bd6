/**
 * What an EdDSA key set (SVC_JWT_KEYS) costs against the HS256 secret the service signs with today, in the same run.
 *
 * Over HTTP: two instances of the same build side by side on one database, `hs256` with the production settings
 * (SVC_JWT_SECRET only) and `eddsa` with the same plus a JWK Set of one Ed25519 key, each with a tenant and
 * sessions of its own (a token signed by one is no token of the other's), measured in turns: GET /v1/me (target:
 * EdDSA >= 0.9 x HS256) and POST /v1/refresh chains, fresh logins before every run (the price, for context).
 * An access token is verified once per instance and then found in the instance's cache of verified tokens, so
 * GET /v1/me pays the signature check rarely; a refresh verifies a token it has never seen and signs two.
 *
 * In-process (no HTTP, the harness's own process): CPU per sign and per verify with the verified-token cache off,
 * and per verify of the same token again through the default cache, for both key kinds, measured in turns.
 */
import { randomUUID } from 'node:crypto'
import { decodeProtectedHeader } from 'jose'
import { generateSigningKey } from '../../lib/sign-in/generate-signing-key.js'
import { readSigningKeys } from '../../lib/sign-in/signing-keys.js'
import { createTokenKeys, type TokenKeys } from '../../lib/sign-in/token-keys.js'
import { BenchContext, isMain, runStandalone } from '../lib/context.js'
import { waitForQuiet } from '../lib/cpu.js'
import type { BenchDatabase } from '../lib/database.js'
import { log, median, type Measurement, type RunResult } from '../lib/load.js'
import { heading, measuredRow, meRequests } from '../lib/scenario-helpers.js'
import { loginStaff, type SessionTokens } from '../lib/seed.js'
import { measureInTurns, withSeededService } from '../lib/service-scenario.js'
import { STAFF } from './me.js'
import { refreshChains } from './refresh.js'

const SCENARIO = 'signing-keys'
const HS256 = 'HS256 secret'
const EDDSA = 'EdDSA key set'
/** The service's default issuer: the in-process keys sign and verify the same claim set as the instances. */
const ISSUER = 'svc-auth-svc'

const WARM_UP_OPERATIONS = 2_000
const OPERATIONS = 4_000
// A cache hit costs about a thousandth of a signature check: this many keep a round well above the clock's grain.
const CACHED_OPERATIONS = 200_000
const ROUNDS = 5

interface Figures {
  me: Measurement
  refresh: Measurement
}

/** The JWK Set text of SVC_JWT_KEYS: one new Ed25519 key, made for this run and never written anywhere. */
async function eddsaKeySet(): Promise<string> {
  return JSON.stringify({ keys: [await generateSigningKey('EdDSA')] })
}

/**
 * Fails the scenario when an instance does not sign as configured: a setting the service ignored would otherwise
 * compare HS256 with itself and print a ratio of 1.0 as good news.
 */
function expectSignedWith(instance: string, sessions: SessionTokens[], alg: 'HS256' | 'EdDSA'): void {
  const header = decodeProtectedHeader(sessions[0]!.access)
  const withKid = alg === 'EdDSA'
  if (header.alg !== alg || (header.kid !== undefined) !== withKid) {
    throw new Error(`${instance}: expected ${alg} tokens ${withKid ? 'with' : 'without'} kid, got header ${JSON.stringify({ alg: header.alg, kid: header.kid !== undefined })}`)
  }
}

/**
 * Both instances run side by side on one database, each with its own tenant; only the one being measured gets
 * load. API only: the idle instance's dispatcher polls would land in the other's runs.
 */
async function measureBoth(ctx: BenchContext, database: BenchDatabase, keySet: string): Promise<{ hs256: Figures; eddsa: Figures }> {
  const env = { SVC_SMS_DISPATCHER: 'off' }
  const hs256Options = { databaseUrl: database.url, owner: database.owner, name: 'service-hs256', env, staff: STAFF }
  const eddsaOptions = { ...hs256Options, name: 'service-eddsa', env: { ...env, SVC_JWT_KEYS: keySet } }
  const { result } = await withSeededService(ctx, hs256Options, async (hs256Service, hs256Tenant) => {
    const { result } = await withSeededService(ctx, eddsaOptions, async (eddsaService, eddsaTenant) => {
      const hs256Sessions = await loginStaff(hs256Service.url, hs256Tenant)
      const eddsaSessions = await loginStaff(eddsaService.url, eddsaTenant)
      expectSignedWith('hs256', hs256Sessions, 'HS256')
      expectSignedWith('eddsa', eddsaSessions, 'EdDSA')
      const hs256 = { label: 'hs256', service: hs256Service, watch: { service: hs256Service.pid } }
      const eddsa = { label: 'eddsa', service: eddsaService, watch: { service: eddsaService.pid } }
      const [hs256Me, eddsaMe] = await measureInTurns(ctx, SCENARIO, 'GET /v1/me', [
        { ...hs256, requests: meRequests(hs256Sessions) },
        { ...eddsa, requests: meRequests(eddsaSessions) },
      ])
      // Fresh logins before every run: a chain a stopped run left one token behind would be refused as reuse.
      const [hs256Refresh, eddsaRefresh] = await measureInTurns(ctx, SCENARIO, 'POST /v1/refresh', [
        { ...hs256, requests: () => refreshChains(hs256Service.url, hs256Tenant) },
        { ...eddsa, requests: () => refreshChains(eddsaService.url, eddsaTenant) },
      ])
      return { hs256: { me: hs256Me!, refresh: hs256Refresh! }, eddsa: { me: eddsaMe!, refresh: eddsaRefresh! } }
    })
    return result
  })
  return result
}

/**
 * The service's CPU per answered request, µs, median over the runs: the instance's CPU time over the run's window
 * divided by its 2xx answers. It puts the price of a signature in the units of the in-process rows.
 */
function serviceMicrosPerRequest(measured: Measurement): number {
  return median(measured.runs.map((run: RunResult) => ((run.cpu.processes.service ?? 0) * run.cpu.seconds * 1e4) / run.ok))
}

function comparedNotes(eddsa: Measurement, hs256: Measurement): string {
  const eddsaMicros = serviceMicrosPerRequest(eddsa)
  const hs256Micros = serviceMicrosPerRequest(hs256)
  const difference = eddsaMicros - hs256Micros
  return (
    `service CPU per request: EdDSA ${eddsaMicros.toFixed(0)} µs, HS256 ${hs256Micros.toFixed(0)} µs ` +
    `(${difference >= 0 ? '+' : ''}${difference.toFixed(0)} µs); EdDSA median run: ${eddsa.cpu}; HS256 median run: ${hs256.cpu}`
  )
}

function comparedRow(scenario: string, eddsa: Measurement, hs256: Measurement) {
  return {
    ...measuredRow(scenario, eddsa),
    baseline: `the same, ${HS256}`,
    baselineValue: hs256.rps,
    ratio: eddsa.rps / hs256.rps,
    notes: comparedNotes(eddsa, hs256),
  }
}

/** Claims as the service signs them for an access token (iss is added by the signer). */
function accessClaims(): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return { sub: '1', tenant_slug: 'bench-academy', tenant_id: 1, role: 'MANAGER', type: 'access', sid: randomUUID(), jti: randomUUID(), iat: now, exp: now + 900 }
}

interface Operation {
  label: string
  run: () => Promise<unknown>
  /** Operations per round; default OPERATIONS. */
  count?: number
}

/**
 * µs of CPU per operation (process.cpuUsage: user and system time of the whole harness process, so work the library or
 * Node leaves to other threads counts too), sequential awaits, after a warm-up; the operations are measured in
 * turns, round 1 of each, round 2 of each, ..., and each figure is the median of its rounds.
 */
async function cpuMicrosPerOperation(operations: Operation[]): Promise<number[]> {
  for (const operation of operations) for (let i = 0; i < WARM_UP_OPERATIONS; i++) await operation.run()
  const rounds: number[][] = operations.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, operation] of operations.entries()) {
      const count = operation.count ?? OPERATIONS
      const before = process.cpuUsage()
      for (let i = 0; i < count; i++) await operation.run()
      const used = process.cpuUsage(before)
      rounds[index]!.push((used.user + used.system) / count)
    }
  }
  const figures = rounds.map(median)
  const shown = (micros: number) => micros.toFixed(micros < 1 ? 3 : 1)
  operations.forEach((operation, index) => log(`  ${operation.label}: ${rounds[index]!.map(shown).join(' / ')} µs CPU per operation, median ${shown(figures[index]!)}`))
  return figures
}

interface KeyKind {
  uncached: TokenKeys
  cached: TokenKeys
  token: string
}

async function keyKind(keySet: string | null, secret: string): Promise<KeyKind> {
  const read = keySet ? readSigningKeys(keySet) : { keys: [] }
  if ('problem' in read) throw new Error(read.problem)
  const options = { keys: read.keys, secret, issuer: ISSUER }
  const uncached = createTokenKeys({ ...options, verifiedCacheSize: 0 })
  const cached = createTokenKeys(options)
  return { uncached, cached, token: await uncached.sign(accessClaims()) }
}

function priceRow(scenario: string, eddsaMicros: number, hs256Micros: number, notes?: string) {
  return {
    scenario,
    value: eddsaMicros,
    unit: 'µs CPU',
    baseline: HS256,
    baselineValue: hs256Micros,
    ratio: eddsaMicros / hs256Micros,
    target: '(context: the price of EdDSA)',
    met: null,
    ...(notes !== undefined && { notes }),
  }
}

/** The price per operation without HTTP: what the two key kinds cost to sign, verify, and find in the cache. */
async function measurePerOperation(ctx: BenchContext, keySet: string): Promise<void> {
  heading(`${SCENARIO}: CPU per operation, in-process`)
  const eddsa = await keyKind(keySet, ctx.jwtSecret)
  const hs256 = await keyKind(null, ctx.jwtSecret)
  // Same text as a client presents it again and again: the first verify fills the cache, every later one hits it.
  await eddsa.cached.verify(eddsa.token)
  await hs256.cached.verify(hs256.token)
  const { busy, waitedMs } = await waitForQuiet()
  if (waitedMs > 1500) log(`  (waited ${(waitedMs / 1000).toFixed(0)} s for other work on the machine to finish; last second ${busy.toFixed(0)}% busy)`)
  const [eddsaVerify, hs256Verify, eddsaSign, hs256Sign, eddsaCached, hs256Cached] = await cpuMicrosPerOperation([
    { label: 'verify EdDSA, cache off', run: () => eddsa.uncached.verify(eddsa.token) },
    { label: 'verify HS256, cache off', run: () => hs256.uncached.verify(hs256.token) },
    { label: 'sign EdDSA', run: () => eddsa.uncached.sign(accessClaims()) },
    { label: 'sign HS256', run: () => hs256.uncached.sign(accessClaims()) },
    { label: 'verify EdDSA, cached', run: () => eddsa.cached.verify(eddsa.token), count: CACHED_OPERATIONS },
    { label: 'verify HS256, cached', run: () => hs256.cached.verify(hs256.token), count: CACHED_OPERATIONS },
  ]) as [number, number, number, number, number, number]
  const method =
    `median of ${ROUNDS} rounds of ${OPERATIONS.toLocaleString('en')} sequential operations (${CACHED_OPERATIONS.toLocaleString('en')} for a cache hit) ` +
    `after ${WARM_UP_OPERATIONS.toLocaleString('en')} of warm-up, process.cpuUsage of the harness`
  ctx.addRow(priceRow('token verify, EdDSA key set vs HS256 secret (in-process, cache off)', eddsaVerify, hs256Verify, method))
  ctx.addRow(priceRow('token sign, EdDSA key set vs HS256 secret (in-process)', eddsaSign, hs256Sign))
  ctx.addRow(
    priceRow(
      'token verify from the cache, EdDSA vs HS256 (in-process, same token again)',
      eddsaCached,
      hs256Cached,
      `EdDSA ${(eddsaCached * 1000).toFixed(0)} ns, HS256 ${(hs256Cached * 1000).toFixed(0)} ns: ` +
        `${((eddsaCached / eddsaVerify) * 100).toFixed(2)} % of an uncached EdDSA verify, ${((hs256Cached / hs256Verify) * 100).toFixed(2)} % of an uncached HS256 one`,
    ),
  )
}

export async function signingKeys(ctx: BenchContext): Promise<void> {
  heading(`${SCENARIO}: ${EDDSA} vs ${HS256}, in turns`)
  const keySet = await eddsaKeySet()
  const database = await ctx.database()
  const { hs256, eddsa } = await measureBoth(ctx, database, keySet)
  const meRatio = eddsa.me.rps / hs256.me.rps
  ctx.addRow({
    ...comparedRow(`GET /v1/me, ${EDDSA} vs ${HS256}`, eddsa.me, hs256.me),
    target: `>= 0.9 x ${HS256}`,
    met: meRatio >= 0.9 && eddsa.me.failures === 0,
  })
  ctx.addRow({
    ...comparedRow('POST /v1/refresh, EdDSA vs HS256', eddsa.refresh, hs256.refresh),
    target: '(context: the price of EdDSA)',
    met: null,
  })
  await measurePerOperation(ctx, keySet)
}

if (isMain(import.meta.url)) await runStandalone(signingKeys)
