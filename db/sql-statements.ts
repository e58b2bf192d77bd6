/**
 * A SQL script's statements, split at semicolons outside quotes, dollar quotes and `--` comments (comments dropped):
 * an extended-protocol query (the embedded store's only kind) takes one statement.
 */
export function sqlStatements(text: string): string[] {
  const dollarQuote = /\$[A-Za-z_]*\$/y
  const statements: string[] = []
  let current = ''
  let at = 0
  const take = (end: number) => {
    current += text.slice(at, end)
    at = end
  }
  while (at < text.length) {
    dollarQuote.lastIndex = at
    const tag = dollarQuote.exec(text)?.[0]
    const char = text[at]!
    if (tag) {
      const close = text.indexOf(tag, at + tag.length)
      take(close < 0 ? text.length : close + tag.length)
    } else if (char === "'" || char === '"') {
      const close = text.indexOf(char, at + 1)
      take(close < 0 ? text.length : close + 1)
    } else if (text.startsWith('--', at)) {
      const close = text.indexOf('\n', at)
      at = close < 0 ? text.length : close
    } else if (char === ';') {
      statements.push(current)
      current = ''
      at += 1
    } else {
      take(at + 1)
    }
  }
  statements.push(current)
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== '')
}
