import { accessSync, constants } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { findExecutable } from '../topology/processes.js'

/** TEST_CHROMIUM_PATH, else `chromium` on PATH (Debian's package installs /usr/bin/chromium). */
function chromiumPath(): string | null {
  return process.env.TEST_CHROMIUM_PATH || findExecutable('chromium')
}

/** Why the browser suite cannot run here, or null when it can. */
export function missingBrowser(): string | null {
  const path = chromiumPath()
  if (path === null) return 'chromium is not installed (apt-get install -y chromium, or set TEST_CHROMIUM_PATH)'
  try {
    accessSync(path, constants.X_OK)
    return null
  } catch {
    return `no executable Chromium at ${path} (apt-get install -y chromium, or set TEST_CHROMIUM_PATH)`
  }
}

/**
 * Headless Chromium driven by playwright-core (no browser download: the system's own). Background networking, sync
 * and component updates are off so that the browser makes no request of its own during a test.
 */
export function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath()
  if (executablePath === null) throw new Error(missingBrowser() ?? 'chromium is missing')
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}
