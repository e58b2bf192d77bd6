import { describe, expect, it } from 'vitest'
import { advertisingAllowedFrom, inQuietHours, quietHoursEnd } from '../../lib/advertising/quiet-hours.js'

const SEOUL = 'Asia/Seoul'
const NEW_YORK = 'America/New_York'
const LOS_ANGELES = 'America/Los_Angeles'
const KOLKATA = 'Asia/Kolkata'

/** An instant given as Seoul wall-clock time (UTC+9 all year, no daylight saving). */
const kst = (wallClock: string) => new Date(`${wallClock}+09:00`)

/** How `at` reads on a clock in `timeZone`, `YYYY-MM-DD HH:MM:SS`, by Intl rather than by the code under test. */
function wallClock(at: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  )
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`
}

describe('inQuietHours', () => {
  it('starts at 21:00:00 and ends at 08:00:00 Seoul time, to the millisecond', () => {
    const cases: [string, boolean][] = [
      ['2027-03-15T08:00:00.000', false],
      ['2027-03-15T12:00:00.000', false],
      ['2027-03-15T20:59:59.999', false],
      ['2027-03-15T21:00:00.000', true],
      ['2027-03-15T23:30:00.000', true],
      ['2027-03-16T00:00:00.000', true],
      ['2027-03-16T07:59:59.999', true],
      ['2027-03-16T08:00:00.000', false],
    ]
    expect(cases.map(([local]) => [local, inQuietHours(kst(local), SEOUL)])).toEqual(cases)
  })

  it('reads the hour in the zone it is given, not in UTC or the machine zone', () => {
    // 12:00Z is 21:00 in Seoul, noon in UTC, 17:30 in Kolkata and 08:00 in New York (EDT).
    const noonUtc = new Date('2027-06-01T12:00:00Z')
    expect([SEOUL, 'UTC', KOLKATA, NEW_YORK].map((zone) => inQuietHours(noonUtc, zone))).toEqual([true, false, false, false])
    expect(inQuietHours(new Date('2027-06-01T21:00:00Z'), 'UTC')).toBe(true)
    expect(inQuietHours(new Date('2027-06-01T07:59:59.999Z'), 'UTC')).toBe(true)
    expect(inQuietHours(new Date('2027-06-01T08:00:00Z'), 'UTC')).toBe(false)
  })

  it('follows a half-hour zone: Kolkata (UTC+5:30) is quiet from 15:30Z to 02:30Z', () => {
    expect(inQuietHours(new Date('2027-06-01T15:29:59.999Z'), KOLKATA)).toBe(false)
    expect(inQuietHours(new Date('2027-06-01T15:30:00Z'), KOLKATA)).toBe(true)
    expect(inQuietHours(new Date('2027-06-02T02:29:59.999Z'), KOLKATA)).toBe(true)
    expect(inQuietHours(new Date('2027-06-02T02:30:00Z'), KOLKATA)).toBe(false)
  })
})

describe('quietHoursEnd', () => {
  it('is null outside the quiet hours, including at 08:00:00 and 20:59:59.999', () => {
    for (const local of ['2027-03-15T08:00:00.000', '2027-03-15T13:45:00', '2027-03-15T20:59:59.999']) {
      expect(quietHoursEnd(kst(local), SEOUL)).toBeNull()
    }
  })

  it('is the next morning 08:00 from 21:00 to midnight, and this morning 08:00 after midnight', () => {
    const nextMorning = kst('2027-03-16T08:00:00')
    for (const local of ['2027-03-15T21:00:00', '2027-03-15T23:30:00', '2027-03-15T23:59:59.999', '2027-03-16T00:00:00', '2027-03-16T07:59:59.999']) {
      expect(quietHoursEnd(kst(local), SEOUL)).toEqual(nextMorning)
    }
    expect(nextMorning.toISOString()).toBe('2027-03-15T23:00:00.000Z')
  })

  it('rolls over the end of a month, of February and of a year', () => {
    expect(quietHoursEnd(kst('2027-01-31T22:00:00'), SEOUL)).toEqual(kst('2027-02-01T08:00:00'))
    expect(quietHoursEnd(kst('2027-02-28T23:00:00'), SEOUL)).toEqual(kst('2027-03-01T08:00:00'))
    expect(quietHoursEnd(kst('2028-02-28T23:00:00'), SEOUL)).toEqual(kst('2028-02-29T08:00:00'))
    const newYear = quietHoursEnd(kst('2026-12-31T22:00:00'), SEOUL)
    expect(newYear?.toISOString()).toBe('2026-12-31T23:00:00.000Z')
    expect(wallClock(newYear!, SEOUL)).toBe('2027-01-01 08:00:00')
  })

  it('is 08:00 UTC in UTC and 08:00 IST (02:30Z) in Kolkata', () => {
    expect(quietHoursEnd(new Date('2027-12-31T21:00:00Z'), 'UTC')?.toISOString()).toBe('2028-01-01T08:00:00.000Z')
    expect(quietHoursEnd(new Date('2028-01-01T03:00:00Z'), 'UTC')?.toISOString()).toBe('2028-01-01T08:00:00.000Z')
    // 21:00 IST on 1 June is 15:30Z; 01:00 IST on 2 June is 19:30Z on 1 June.
    expect(quietHoursEnd(new Date('2027-06-01T15:30:00Z'), KOLKATA)?.toISOString()).toBe('2027-06-02T02:30:00.000Z')
    expect(quietHoursEnd(new Date('2027-06-01T19:30:00Z'), KOLKATA)?.toISOString()).toBe('2027-06-02T02:30:00.000Z')
  })

  describe('across a daylight-saving switch (New York switches at 02:00 local on 8 March and 1 November 2026)', () => {
    it('ends the spring-forward night at 08:00 EDT, 12:00Z', () => {
      // 22:00 EST on 7 March (03:00Z on 8 March), 01:30 EST and 03:30 EDT on 8 March: one night, one end.
      for (const at of ['2026-03-08T03:00:00Z', '2026-03-08T06:30:00Z', '2026-03-08T07:30:00Z']) {
        const end = quietHoursEnd(new Date(at), NEW_YORK)
        expect(end?.toISOString()).toBe('2026-03-08T12:00:00.000Z')
        expect(wallClock(end!, NEW_YORK)).toBe('2026-03-08 08:00:00')
      }
    })

    it('ends the fall-back night at 08:00 EST, 13:00Z, from either 01:30', () => {
      // 22:00 EDT on 31 October (02:00Z), and the 01:30 that happens twice: 05:30Z (EDT) and 06:30Z (EST).
      for (const at of ['2026-11-01T02:00:00Z', '2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z']) {
        const end = quietHoursEnd(new Date(at), NEW_YORK)
        expect(end?.toISOString()).toBe('2026-11-01T13:00:00.000Z')
        expect(wallClock(end!, NEW_YORK)).toBe('2026-11-01 08:00:00')
      }
    })

    it('gets 08:00 right where the offset at 08:00 UTC is not the offset at 08:00 local (Los Angeles)', () => {
      // Los Angeles switches at 10:00Z (spring) and 09:00Z (autumn), after 08:00Z: a single pass would be an hour off.
      const spring = quietHoursEnd(new Date('2026-03-08T05:00:00Z'), LOS_ANGELES)
      expect(spring?.toISOString()).toBe('2026-03-08T15:00:00.000Z')
      expect(wallClock(spring!, LOS_ANGELES)).toBe('2026-03-08 08:00:00')
      const autumn = quietHoursEnd(new Date('2026-11-01T05:00:00Z'), LOS_ANGELES)
      expect(autumn?.toISOString()).toBe('2026-11-01T16:00:00.000Z')
      expect(wallClock(autumn!, LOS_ANGELES)).toBe('2026-11-01 08:00:00')
    })
  })
})

describe('advertisingAllowedFrom', () => {
  it('is the instant itself outside the quiet hours', () => {
    for (const local of ['2027-03-15T08:00:00.000', '2027-03-15T20:59:59.999']) {
      expect(advertisingAllowedFrom(kst(local), SEOUL)).toEqual(kst(local))
    }
  })

  it('is the 08:00 that ends the quiet hours inside them', () => {
    expect(advertisingAllowedFrom(kst('2027-03-15T21:00:00'), SEOUL)).toEqual(kst('2027-03-16T08:00:00'))
    expect(advertisingAllowedFrom(kst('2027-03-16T07:59:59.999'), SEOUL)).toEqual(kst('2027-03-16T08:00:00'))
    expect(advertisingAllowedFrom(kst('2026-12-31T22:00:00'), SEOUL)).toEqual(kst('2027-01-01T08:00:00'))
    expect(advertisingAllowedFrom(new Date('2026-03-08T03:00:00Z'), NEW_YORK).toISOString()).toBe('2026-03-08T12:00:00.000Z')
    expect(advertisingAllowedFrom(new Date('2026-11-01T02:00:00Z'), NEW_YORK).toISOString()).toBe('2026-11-01T13:00:00.000Z')
  })
})
