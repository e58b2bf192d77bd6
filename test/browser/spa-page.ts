import type { Page } from 'playwright-core'
import { describe } from 'vitest'
import { missingBrowser } from './chromium.js'

/** Why the browser suite cannot run here, or null; printed once per file that skips. */
const missing = missingBrowser()

/** `describe` when Chromium is here, else a skipped suite whose name carries the reason (printed too). */
export function describeBrowser(name: string, fn: () => void): void {
  if (!missing) {
    describe(name, fn)
    return
  }
  console.warn(`[browser] suite skipped: ${missing}`)
  describe.skip(`${name} [skipped: ${missing}]`, fn)
}

/** What the page's spa.js answers: the service's answer as the page can read it, or the browser's refusal. */
export interface Answer {
  status?: number
  body?: any
  requestId?: string | null
  replayed?: string | null
  failed?: string
}

/** Calls `spa[name](...args)` in the page (test/browser/site/spa.js and the pages that extend it). */
export function callSpa<Name extends string>(page: Page, name: Name, ...args: unknown[]): Promise<Answer> {
  return page.evaluate(
    ({ name, args }) => (globalThis as unknown as { spa: Record<string, (...rest: unknown[]) => Promise<Answer>> }).spa[name]!(...args),
    { name, args },
  )
}
