/**
 * The service's notion of now, for rules that depend on the time of day (the advertising quiet hours). Production
 * uses the system clock; tests give the app or the dispatcher a fixed one instead of waiting for 21:00.
 */
export type Clock = () => Date

export const systemClock: Clock = () => new Date()
