/**
 * How long an instance's shutdown may take, and the dispatcher's share of it. Orchestrators give a stopping process
 * about 30 s before SIGKILL (Kubernetes' default grace period); the process ends itself at that point (server.ts)
 * rather than be killed mid-write.
 */
export const CLOSE_TIMEOUT_MS = 30_000

/**
 * How long, once shutdown begins, the dispatcher keeps retrying to record a provider answer the database does not
 * take (lib/dispatch/attempt.ts): short enough that the pool still closes and the answers given up are
 * logged before CLOSE_TIMEOUT_MS ends the process.
 */
export const DISPATCH_RECORD_GRACE_MS = 20_000
