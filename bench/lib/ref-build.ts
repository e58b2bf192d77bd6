import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, rm, symlink, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { onCleanup, spawnTracked } from './cleanup.js'
import { log } from './load.js'
import { REPO_ROOT, snapshotBuild } from './service.js'

const run = promisify(execFile)

async function git(...args: string[]): Promise<string> {
  return (await run('git', args, { cwd: REPO_ROOT })).stdout.trim()
}

/** The commit a ref names, or null when it names none (`origin/main` in a clone without that remote). */
export async function resolveCommit(ref: string): Promise<string | null> {
  try {
    return await git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`)
  } catch {
    return null
  }
}

/** `d414b3b Test: a refusal carried by ...`: the short hash and the subject's start. */
export async function commitSubject(commit: string): Promise<string> {
  const line = await git('log', '-1', '--format=%h %s', commit)
  return line.length > 80 ? `${line.slice(0, 77)}...` : line
}

async function removeWorktree(path: string): Promise<void> {
  // The link first, by itself: nothing that removes the tree may reach the checkout's node_modules through it.
  await unlink(join(path, 'node_modules')).catch(() => undefined)
  try {
    await git('worktree', 'remove', '--force', path)
  } catch {
    // Half-created (the add failed): the directory and git's record of it are removed below.
  }
  await rm(path, { recursive: true, force: true })
  // git forgets a worktree whose directory is gone at its next prune anyway; a failure here only delays that.
  await git('worktree', 'prune').catch(() => undefined)
}

/**
 * `npm run build` in `cwd` as a tracked child: Ctrl-C stops it (its whole process group) before the worktree it
 * writes into is removed.
 */
function npmBuild(cwd: string): Promise<void> {
  const child = spawnTracked('npm', ['run', '-s', 'build'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8')
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`npm run build exited (${code ?? signal}):\n${output}`))))
  })
}

/** `make(commit)` once per commit in this run: a second caller gets the first one's promise. */
function oncePerCommit(make: (commit: string) => Promise<string>): (commit: string) => Promise<string> {
  const made = new Map<string, Promise<string>>()
  return (commit) => {
    let result = made.get(commit)
    if (!result) {
      result = make(commit)
      made.set(commit, result)
    }
    return result
  }
}

/**
 * The loopback fake provider of a commit (its bench/lib/fake-provider.ts and the fakes folder), extracted under
 * bench/.build/ and removed at the end of the run: the fake must speak the protocol of the adapter it serves (the
 * one-call send before the group API, the group API after), so each side of a comparison runs its own commit's.
 * Returns the path of its fake-provider.ts, for startFake.
 */
export const refProviderFake = oncePerCommit(extractProviderFake)

async function extractProviderFake(commit: string): Promise<string> {
  const dir = join(REPO_ROOT, 'bench', '.build', `fake-${commit.slice(0, 7)}-${process.pid}-${randomBytes(3).toString('hex')}`)
  await mkdir(dir, { recursive: true })
  onCleanup(`remove ${dir}`, () => rm(dir, { recursive: true, force: true }))
  const archive = join(dir, 'fake.tar')
  // The fake moved from test/fakes/ to test/support/fakes/: a commit from before the move has the old folder.
  const fakes = (await git('ls-tree', '--name-only', commit, 'test/support/fakes')) ? 'test/support/fakes' : 'test/fakes'
  // The fake registers the benchmark's AlimTalk template from its own module, in commits that have it.
  const template = (await git('ls-tree', '--name-only', commit, 'bench/lib/kakao-template.ts')) ? ['bench/lib/kakao-template.ts'] : []
  await git('archive', '--format=tar', `--output=${archive}`, commit, 'bench/lib/fake-provider.ts', ...template, fakes)
  await run('tar', ['-xf', archive, '-C', dir])
  await rm(archive)
  return join(dir, 'bench', 'lib', 'fake-provider.ts')
}

/**
 * `npm run build` of a commit in a git worktree of its own under bench/.build/, then a private copy of its dist/
 * like the working tree's (serviceBuild). The worktree shares the checkout's node_modules through a symlink, so both
 * sides run on the same installed packages; it is removed as soon as dist/ is copied, and on failure or Ctrl-C.
 * One build per commit: comparing a commit with itself measures the noise.
 */
export const refBuild = oncePerCommit(buildInWorktree)

async function buildInWorktree(commit: string): Promise<string> {
  const started = Date.now()
  const short = commit.slice(0, 7)
  const worktree = join(REPO_ROOT, 'bench', '.build', `worktree-${short}-${process.pid}-${randomBytes(3).toString('hex')}`)
  await mkdir(join(REPO_ROOT, 'bench', '.build'), { recursive: true })
  const removeCleanup = onCleanup(`remove worktree ${worktree}`, () => removeWorktree(worktree))
  try {
    log(`building ${short} in a worktree (npm run build) ...`)
    await git('worktree', 'add', '--detach', '--quiet', worktree, commit)
    await symlink(join(REPO_ROOT, 'node_modules'), join(worktree, 'node_modules'), 'dir')
    await npmBuild(worktree).catch((error: Error) => {
      throw new Error(`the build of ${short} failed: ${error.message}`)
    })
    const snapshot = await snapshotBuild(join(worktree, 'dist'), short)
    log(`built ${short} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    return snapshot
  } finally {
    removeCleanup()
    await removeWorktree(worktree)
  }
}
