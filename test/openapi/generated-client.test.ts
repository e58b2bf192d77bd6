import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { totpCode } from '../../lib/account-security/second-factor/totp.js'
import { strongPassword, validBusinessNumber } from '../support/auth-fixtures.js'
import { unique } from '../support/fixtures.js'
import { useTestApp } from '../support/helper.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const clientFlow = fileURLToPath(new URL('./client-flow.ts', import.meta.url))

type OwnerSignUp = Record<'instituteName' | 'businessRegistrationNumber' | 'userLoginId' | 'password' | 'name', string>

interface TryItFlow {
  tryIt(
    baseUrl: string,
    owner: OwnerSignUp,
    idempotencyKey: string,
  ): Promise<{
    me: Record<string, unknown>
    sent: { id: number }
    replayed: { id: number; header: string | null }
    history: { items: Array<{ id: number }> }
    detail: { recipients: unknown[] }
    missingCode: string
  }>
  signInWithTotp(
    baseUrl: string,
    owner: OwnerSignUp,
    authenticator: (secret: string, at?: number) => string,
  ): Promise<{
    enrolment: { secret: string; otpauthUri: string; qrCode: string }
    recoveryCodes: string[]
    factors: { totp: boolean; sms: boolean; recoveryCodesLeft: number }
    challenge: { mfaRequired: true; methods: string[]; expiresIn: number }
    wrongCode: string
    session: { user: { userLoginId: string } }
    me: Record<string, unknown>
  }>
}

// Loaded by a path the compiler does not follow: the file needs the generated types, which only the test writes.
const loadClientFlow = (path: string) => import(path) as Promise<TryItFlow>

/** The project's compiler options (strict and all), for a program of the given files only. */
function typeCheck(files: string[]): string[] {
  const configPath = join(root, 'tsconfig.json')
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path))
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath)
  const program = ts.createProgram(files, { ...options, noEmit: true, sourceMap: false })
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    if (!diagnostic.file || diagnostic.start === undefined) return message
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
    return `${diagnostic.file.fileName}:${line + 1}:${character + 1} ${message}`
  })
}

describe('a client generated from the OpenAPI document (openapi-typescript + openapi-fetch)', () => {
  const app = useTestApp()
  let dir: string | undefined
  let baseUrl: string

  beforeAll(async () => {
    await app.current.listen({ host: '127.0.0.1', port: 0 })
    baseUrl = `http://127.0.0.1:${(app.current.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('type-checks test/openapi/client-flow.ts against the generated types', async () => {
    const types = astToString(await openapiTS(app.current.swagger() as OpenAPI3, { silent: true }))
    // Under node_modules, so the copy resolves openapi-fetch and @types/node as the project does.
    await mkdir(join(root, 'node_modules/.cache'), { recursive: true })
    dir = await mkdtemp(join(root, 'node_modules/.cache/svc-openapi-client-'))
    await writeFile(join(dir, 'openapi.d.ts'), types)
    await copyFile(clientFlow, join(dir, 'client-flow.ts'))
    const diagnostics = typeCheck([join(dir, 'client-flow.ts')])
    // Printed whole, so a broken client is explained in the CI log and not only counted.
    if (diagnostics.length > 0) console.error(`client-flow.ts does not compile against the generated types:\n${diagnostics.join('\n')}`)
    expect(diagnostics).toEqual([])
  })

  const newOwner = (): OwnerSignUp => ({
    instituteName: 'Client Academy',
    businessRegistrationNumber: validBusinessNumber({ hyphens: true }),
    userLoginId: unique('client-owner'),
    password: strongPassword(),
    name: 'Kim Owner',
  })

  it('runs the README "Try it" flow with that client against the listening service', async () => {
    const owner = newOwner()
    const { tryIt } = await loadClientFlow(clientFlow)
    const result = await tryIt(baseUrl, owner, `try-${randomUUID()}`)
    expect(result.me).toMatchObject({ userLoginId: owner.userLoginId, role: 'OWNER' })
    expect(result.sent).toMatchObject({ title: 'Hello', status: 'PENDING', recipientCount: 1 })
    expect(result.replayed).toEqual({ id: result.sent.id, header: 'true' })
    expect(result.history.items.map((item) => item.id)).toEqual([result.sent.id])
    expect(result.detail.recipients).toEqual([expect.objectContaining({ phone: '010-****-5678', name: 'Kim' })])
    expect(result.missingCode).toBe('SMS_NOT_FOUND')
  })

  it('signs in with a second factor with that client: enrols TOTP, login answers mfaRequired, completeLogin opens the session', async () => {
    const owner = newOwner()
    const { signInWithTotp } = await loadClientFlow(clientFlow)
    // The test is the authenticator app (lib/account-security/second-factor/totp.ts computes codes as one does).
    const result = await signInWithTotp(baseUrl, owner, totpCode)
    expect(result.enrolment.otpauthUri).toContain(`secret=${result.enrolment.secret}`)
    expect(result.enrolment.qrCode).toMatch(/^data:image\/svg\+xml;base64,/)
    expect(result.recoveryCodes).toHaveLength(10)
    expect(result.factors).toEqual({ totp: true, sms: false, recoveryCodesLeft: 10 })
    expect(result.challenge).toEqual({ mfaRequired: true, methods: ['TOTP', 'RECOVERY_CODE'], expiresIn: 300 })
    expect(result.wrongCode).toBe('MFA_CODE_INVALID')
    expect(result.session.user).toMatchObject({ userLoginId: owner.userLoginId, role: 'OWNER' })
    expect(result.me).toMatchObject({ userLoginId: owner.userLoginId, role: 'OWNER' })
  })
})
