import { maskPhone, normalizePhone, PHONE_WRITING } from '../sms/phone.js'

/**
 * Query parameters whose values a request log must not carry: `q` is search text (what staff typed about students
 * and guardians), and the rest name credentials a client or a link might put in a query string by mistake.
 */
const SECRET_PARAMETER = /^(q|.*(token|passw|secret|signature|api[-_]?key|auth|session|cookie|otp).*|sig|code|key)$/i

const MIN_PHONE_DIGITS = 8
// Integer ids are canonical decimal (docs/api.md#conventions); the only phones written so are 15xx representative
// numbers, a business's public line.
const CANONICAL_INTEGER = /^[1-9][0-9]*$/

/**
 * The request target as a log line shows it: path and parameter names as sent, the value of every secret parameter
 * replaced, and every phone number, in a path segment (`DELETE /v1/sms/opt-outs/{phone}`) or a parameter value,
 * masked as answers mask it. Names and values are compared after percent-decoding, so `%71=` (an encoded `q`) and
 * `%2B8210...` are caught too.
 */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?')
  const path = (mark === -1 ? url : url.slice(0, mark)).split('/').map(maskedIfPhone).join('/')
  if (mark === -1) return path
  const pairs = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      if (equals === -1) return maskedIfPhone(pair)
      const name = pair.slice(0, equals)
      return SECRET_PARAMETER.test(decoded(name)) ? `${name}=[redacted]` : `${name}=${maskedIfPhone(pair.slice(equals + 1))}`
    })
  return `${path}?${pairs.join('&')}`
}

/**
 * A phone number comes out masked (`010-****-5678`), anything else as it was. A number is what the API would take
 * for one, or anything written like one with a trunk `0` or a `+` even if no carrier assigned it (a mistyped
 * guardian's number is still nearly theirs). Integer ids stay readable. A `+` is read both ways, as itself and as a
 * query string's space: `010+1234+5678` is a number too.
 */
function maskedIfPhone(text: string): string {
  if (!/[0-9]/.test(text)) return text
  for (const written of [percentDecoded(text), decoded(text)]) {
    const digits = phoneDigits(written.trim())
    if (digits !== null) return maskPhone(digits)
  }
  return text
}

function phoneDigits(written: string): string | null {
  if (!PHONE_WRITING.test(written) || CANONICAL_INTEGER.test(written)) return null
  const phone = normalizePhone(written)
  if (phone !== null) return phone
  const digits = written.replace(/\D/g, '')
  return digits.length >= MIN_PHONE_DIGITS && (written.startsWith('+') || digits.startsWith('0')) ? digits : null
}

/** Percent-decoded, `+` as a space (a query string's form encoding). */
function decoded(text: string): string {
  return percentDecoded(text.replace(/\+/g, ' '))
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
