import { describe, expect, it } from 'vitest'
import { deviceCategory } from '../../lib/sign-in/device-category.js'

const UA = {
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  androidPhone:
    'Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  androidTablet:
    'Mozilla/5.0 (Linux; Android 13; SM-X710N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  firefoxAndroidTablet: 'Mozilla/5.0 (Android 13; Tablet; rv:125.0) Gecko/125.0 Firefox/125.0',
  firefoxAndroidPhone: 'Mozilla/5.0 (Android 13; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0',
  windowsChrome:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  macSafari:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  curl: 'curl/8.5.0',
}

describe('deviceCategory', () => {
  describe('from the X-Device-Category header', () => {
    it.each([
      ['WEB', 'WEB', UA.iphone],
      ['MOBILE', 'MOBILE', UA.windowsChrome],
      ['TABLET', 'TABLET', UA.iphone],
      ['DESKTOP', 'DESKTOP', UA.ipad],
      ['mobile', 'MOBILE', undefined],
      ['Tablet', 'TABLET', undefined],
      ['  desktop\t', 'DESKTOP', undefined],
    ] as const)('header %j gives %s', (header, expected, userAgent) => {
      expect(deviceCategory(header, userAgent)).toBe(expected)
    })
  })

  describe('falling back to the User-Agent', () => {
    it.each([
      ['an unknown header value', 'MOBILE', 'PHONE', UA.iphone],
      ['an empty header', 'TABLET', '', UA.ipad],
      ['a blank header', 'MOBILE', '   ', UA.androidPhone],
      ['a header naming a category inside other text', 'WEB', 'MOBILE-APP', UA.windowsChrome],
      ['no header', 'TABLET', undefined, UA.ipad],
    ] as const)('%s gives %s', (_case, expected, header, userAgent) => {
      expect(deviceCategory(header, userAgent)).toBe(expected)
    })
  })

  describe('User-Agent rules', () => {
    it.each([
      ['iPhone Safari', 'MOBILE', UA.iphone],
      ['iPad Safari, despite its Mobile token', 'TABLET', UA.ipad],
      ['Android phone Chrome', 'MOBILE', UA.androidPhone],
      // The rule literally: no "tablet" and no "mobile" in it, so WEB (a tablet app sends the header instead).
      ['Android tablet Chrome, which omits Mobile', 'WEB', UA.androidTablet],
      ['Firefox on an Android tablet', 'TABLET', UA.firefoxAndroidTablet],
      ['Firefox on an Android phone', 'MOBILE', UA.firefoxAndroidPhone],
      ['a generic tablet app', 'TABLET', 'AcademyApp/2.1 (TABLET; Linux)'],
      ['a generic mobile app', 'MOBILE', 'AcademyApp/2.1 (mobile; iOS 17)'],
      ['an iPod', 'MOBILE', 'Mozilla/5.0 (iPod touch; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148'],
      ['an Android User-Agent without "Mobile" or "Tablet"', 'WEB', 'Mozilla/5.0 (Linux; Android 14; Pixel Fold) Chrome/124.0.0.0 Safari/537.36'],
      ['Windows Chrome', 'WEB', UA.windowsChrome],
      ['Mac Safari', 'WEB', UA.macSafari],
      ['curl', 'WEB', UA.curl],
      ['an empty User-Agent', 'WEB', ''],
      ['no User-Agent', 'WEB', undefined],
    ] as const)('%s is %s', (_case, expected, userAgent) => {
      expect(deviceCategory(undefined, userAgent)).toBe(expected)
    })
  })
})
