import { readFileSync } from 'node:fs'

/**
 * A setting given as JSON text, or as `file:` and a path to JSON (a key set kept in a mounted secret): the parsed
 * value, or the problem that stops the start. A problem never repeats the content, which may be key material, since
 * start-up errors end up in logs. `shape` says what the JSON should be, for the problem's text.
 */
export function readJsonSetting(name: string, setting: string, shape: string): { value: unknown } | { problem: string } {
  let text = setting
  if (setting.startsWith('file:')) {
    const path = setting.slice('file:'.length)
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      return { problem: `${name}: cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})` }
    }
  }
  try {
    return { value: JSON.parse(text) }
  } catch {
    return { problem: `${name}: not JSON (${shape}, or file: and a path to one)` }
  }
}

/**
 * The keys of a key-set setting, each read by `parse`, in order: the first problem stops the start, naming the key by
 * its position and kid, never by its material; a kid given twice is a problem too (a kid must name one key).
 */
export function collectKeys<K extends { kid: string }>(
  name: string,
  entries: readonly unknown[],
  parse: (entry: unknown) => K | { problem: string },
): { keys: K[] } | { problem: string } {
  const keys: K[] = []
  for (const [index, entry] of entries.entries()) {
    const kid = (entry as { kid?: unknown } | null)?.kid
    const place = `${name}: key ${index + 1}${typeof kid === 'string' ? ` (kid ${JSON.stringify(kid)})` : ''}`
    const key = parse(entry)
    if ('problem' in key) return { problem: `${place}: ${key.problem}` }
    if (keys.some((other) => other.kid === key.kid)) return { problem: `${place}: kid used twice` }
    keys.push(key)
  }
  return { keys }
}
