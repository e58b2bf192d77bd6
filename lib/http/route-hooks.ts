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
