/**
 * Query parameters whose values a request log must not carry: `q` is search text (what staff typed about students
 * and guardians), and the rest name credentials a client or a link might put in a query string by mistake.
 */
const SECRET_PARAMETER = /^(q|.*(token|passw|secret|signature|api[-_]?key|auth|session|cookie|otp).*|sig|code|key)$/i

/**
 * The request target as a log line shows it: path and parameter names as sent, the value of every secret parameter
 * replaced. Names are compared after percent-decoding, so `%71=` (an encoded `q`) is caught too.
 */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?')
  if (mark === -1) return url
  const pairs = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      const name = equals === -1 ? pair : pair.slice(0, equals)
      return SECRET_PARAMETER.test(decodedName(name)) && equals !== -1 ? `${name}=[redacted]` : pair
    })
  return `${url.slice(0, mark)}?${pairs.join('&')}`
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    return name
  }
}
