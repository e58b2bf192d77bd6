import type { RouteOptions } from 'fastify'

type HookName = 'onRequest' | 'preValidation' | 'onSend' | 'onResponse' | 'onRequestAbort'

/**
 * Adds a hook to one route from an onRoute hook, so a feature only costs the routes that use it (global hooks
 * run on every request). Route hooks run after the instance's hooks of the same kind.
 */
export function appendRouteHook(route: RouteOptions, name: HookName, hook: (...args: never[]) => unknown): void {
  const existing = route[name] as unknown
  const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  ;(route as unknown as Record<HookName, unknown[]>)[name] = [...hooks, hook]
}

/**
 * Continues a callback-style hook once `work` is done, or fails the request with its error. Hooks that run on every
 * request are callbacks that answer at once where they do not apply, and hand their async work here where they do
 * (docs/architecture.md#what-every-request-pays). A rejection without an error fails the request all the same.
 */
export function continueAfter(work: Promise<unknown>, done: (error?: Error) => void): void {
  work.then(
    () => done(),
    (error: unknown) => done(error instanceof Error ? error : new Error(`hook failed without an error: ${String(error)}`)),
  )
}
