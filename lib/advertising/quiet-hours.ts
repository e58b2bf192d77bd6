/**
 * The advertising quiet hours: from 21:00 to before 08:00 on the tenant-facing calendar (SVC_TIME_ZONE). Korean law
 * forbids advertising by SMS at night without separate consent, so an advertisement is neither accepted for nor
 * handed to the provider in these hours (docs/api.md#advertising).
 */

const QUIET_FROM_HOUR = 21
const QUIET_UNTIL_HOUR = 8

interface LocalTime {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

// Building a DateTimeFormat costs far more than using one: one per zone, kept.
const formats = new Map<string, Intl.DateTimeFormat>()

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formats.set(timeZone, format)
  }
  return format
}

function localTime(at: Date, timeZone: string): LocalTime {
  const parts: Record<string, number> = {}
  for (const part of formatFor(timeZone).formatToParts(at)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value)
  }
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! }
}

/** The zone's offset from UTC at `at`, in milliseconds (whole seconds: no zone in use has finer offsets). */
function offsetAt(at: number, timeZone: string): number {
  const local = localTime(new Date(at), timeZone)
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second)
  return asUtc - Math.floor(at / 1000) * 1000
}

/**
 * The instant of a local wall-clock time given as if it were UTC. Two passes, so an offset that changes between
 * the guess and the answer (a daylight-saving switch) is still right; a time skipped by a switch comes out just after it.
 */
function instantOfLocal(wallClockAsUtc: number, timeZone: string): Date {
  const guess = wallClockAsUtc - offsetAt(wallClockAsUtc, timeZone)
  return new Date(wallClockAsUtc - offsetAt(guess, timeZone))
}

/** The one statement of the window, which every function below asks: 21:00:00 is quiet, 08:00:00 is not. */
function isQuietHour(hour: number): boolean {
  return hour >= QUIET_FROM_HOUR || hour < QUIET_UNTIL_HOUR
}

/** Whether `at` falls in the quiet hours of `timeZone`. */
export function inQuietHours(at: Date, timeZone: string): boolean {
  return isQuietHour(localTime(at, timeZone).hour)
}

/** The 08:00 that ends the quiet hours `at` falls in, or null when `at` is not in quiet hours. */
export function quietHoursEnd(at: Date, timeZone: string): Date | null {
  const local = localTime(at, timeZone)
  if (!isQuietHour(local.hour)) return null
  // Before 08:00 the night ends this morning; from 21:00, tomorrow morning (Date.UTC rolls the day over months).
  const day = local.hour < QUIET_UNTIL_HOUR ? local.day : local.day + 1
  return instantOfLocal(Date.UTC(local.year, local.month - 1, day, QUIET_UNTIL_HOUR), timeZone)
}

/** `at`, or the end of the quiet hours it falls in: the earliest moment an advertisement due at `at` may go out. */
export function advertisingAllowedFrom(at: Date, timeZone: string): Date {
  return quietHoursEnd(at, timeZone) ?? at
}
