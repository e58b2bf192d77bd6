/** Types for build-lock.mjs (plain JavaScript so it runs where TypeScript is not installed). */
export declare function withBuildLock<T>(lockPath: string, work: () => T, options?: { timeoutMs?: number }): T
