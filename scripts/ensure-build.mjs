// Compiles the service only when dist/ is missing or older than its sources (the operations
// commands must not recompile a current build, and must run after `npm ci --omit=dev` on a built tree).
// Plain JavaScript with no dependencies, so it runs where TypeScript and tsx are not installed.
//
//   node scripts/ensure-build.mjs           build when stale, else do nothing
//   node scripts/ensure-build.mjs --force   always build (npm run build)
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { withBuildLock } from './build-lock.mjs'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const dist = join(root, 'dist')
const stampPath = join(dist, '.build-stamp.json')
// Beside dist/, not in it: a build may remove and recreate dist/.
const lockPath = join(root, '.build-lock')

// What tsconfig.build.json compiles, plus the files that change how it compiles.
const SOURCE_FILES = ['app.ts', 'build.ts', 'server.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json']
const SOURCE_DIRS = ['plugins', 'routes', 'lib', 'db', 'scripts']
// Read at run time beside the compiled code: the SQL functions the migrator applies (db/function-files.ts).
const COPIED_DIRS = [{ from: join(root, 'db', 'functions'), to: join(dist, 'db', 'functions'), ending: '.sql' }]

function walk(dir, found) {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, found)
    else if (entry.isFile() && (entry.name.endsWith('.ts') || entry.name.endsWith('.sql'))) found.push(path)
  }
}

/** Newest modification time and the list of sources: an edit raises the first, a deleted or renamed file changes the second. */
function sourceFingerprint() {
  const files = SOURCE_FILES.map((file) => join(root, file)).filter((path) => existsSync(path))
  for (const dir of SOURCE_DIRS) walk(join(root, dir), files)
  let newestMs = 0
  // Whole milliseconds: copies that keep timestamps (cp -p, tar, Docker COPY) keep no more than that.
  for (const file of files) newestMs = Math.max(newestMs, Math.floor(statSync(file).mtimeMs))
  return { newestMs, files: files.map((file) => relative(root, file)).sort() }
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampPath, 'utf8'))
  } catch {
    return null
  }
}

function staleReason(fingerprint) {
  if (!existsSync(join(dist, 'server.js'))) return 'dist/ has no build'
  const stamp = readStamp()
  // A tree shipped with dist/ and without its sources is current by definition.
  if (!existsSync(join(root, 'server.ts'))) return null
  if (!stamp) return 'dist/ has no build stamp'
  // One millisecond of slack: copies that keep timestamps may round the sub-millisecond part up (seen with Node's
  // cpSync), which must not make a shipped build look stale.
  if (fingerprint.newestMs > stamp.newestMs + 1) return 'a source file changed after the last build'
  if (fingerprint.files.join('\n') !== stamp.files.join('\n')) return 'source files were added or removed since the last build'
  return null
}

function findTsc() {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc')
  } catch {
    return null
  }
}

/** Compiles dist/ and writes its stamp; returns the exit code (a failure's message is already printed). */
function build(reason) {
  const tsc = findTsc()
  if (!tsc) {
    process.stderr.write(
      `error: the build in dist/ is out of date (${reason}) and TypeScript is not installed ` +
        '(npm ci --omit=dev?); run `npm ci && npm run build` first, or ship a built dist/\n',
    )
    return 1
  }
  // Taken before compiling: a source saved while tsc runs is newer than the stamp and triggers the next build.
  const fingerprint = sourceFingerprint()
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) {
    process.stderr.write('error: the TypeScript build failed (see above)\n')
    return result.status ?? 1
  }
  for (const { from, to, ending } of COPIED_DIRS) {
    rmSync(to, { recursive: true, force: true })
    cpSync(from, to, { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith(ending) })
  }
  mkdirSync(dist, { recursive: true })
  writeFileSync(stampPath, `${JSON.stringify({ newestMs: fingerprint.newestMs, files: fingerprint.files })}\n`)
  return 0
}

// The lock is taken only to build: a shipped tree with a current build may be read-only.
try {
  if (process.argv.includes('--force')) process.exitCode = withBuildLock(lockPath, () => build('forced'))
  else if (staleReason(sourceFingerprint())) {
    // Checked again under the lock: a command that waited for another's build finds dist/ current and builds nothing.
    process.exitCode = withBuildLock(lockPath, () => {
      const reason = staleReason(sourceFingerprint())
      return reason ? build(reason) : 0
    })
  }
} catch (error) {
  process.stderr.write(`error: ${error.message}\n`)
  process.exitCode = 1
}
