/**
 * The device category a session belongs to (docs/api.md#device-categories); one session per category is kept, so a new
 * login replaces only the earlier session of the same kind.
 */

export const DEVICE_CATEGORIES = ['WEB', 'MOBILE', 'TABLET', 'DESKTOP'] as const
export type DeviceCategory = (typeof DEVICE_CATEGORIES)[number]

/**
 * The `X-Device-Category` header wins when it names a category (case and surrounding space ignored); an invalid
 * value is ignored rather than refused, since the User-Agent still gives an answer. DESKTOP comes only from the
 * header: a desktop browser's User-Agent is a WEB session.
 */
export function deviceCategory(headerValue: string | undefined, userAgent: string | undefined): DeviceCategory {
  const declared = headerValue?.trim().toUpperCase()
  const valid = DEVICE_CATEGORIES.find((category) => category === declared)
  if (valid) return valid
  return categoryFromUserAgent(userAgent ?? '')
}

function categoryFromUserAgent(userAgent: string): DeviceCategory {
  // The documented rule word for word: iPad/tablet -> TABLET, mobile -> MOBILE, else WEB. Tablets first, since iPad
  // Safari also carries `Mobile/...`. An Android tablet without "Tablet" in its User-Agent is WEB, and iPadOS 13+
  // Safari (a Mac User-Agent) too; apps that know better send X-Device-Category.
  if (/ipad|tablet/i.test(userAgent)) return 'TABLET'
  if (/mobile/i.test(userAgent)) return 'MOBILE'
  return 'WEB'
}
