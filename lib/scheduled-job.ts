import type { FastifyInstance } from 'fastify'
import cron from 'node-cron'

export interface ScheduledJob {
  /** The cron task's name (node-cron lists tasks by it). */
  name: string
  /** node-cron's expression, seconds first. */
  expression: string
  tick: () => unknown
  /** Runs once the app is ready, scheduled or not: work left over from before the start is found at once. */
  onReady?: () => unknown
  /** Awaited when the app closes, after the schedule is gone: the work in flight finishes or is given back. */
  stop?: () => Promise<unknown>
  /** Lets the process exit while the task waits (housekeeping that nobody waits for). */
  unref?: boolean
}

/**
 * A background job's cron schedule, never two ticks at once, destroyed when the app closes. An app built without
 * scheduled jobs (`AppOptions.scheduledJobs: false`, as tests build it) gets no schedule: a test calls the job
 * itself, so no tick races it. `onReady` and `stop` apply either way.
 */
export function scheduleJob(app: FastifyInstance, scheduledJobs: boolean | undefined, job: ScheduledJob): void {
  const task =
    scheduledJobs === false
      ? undefined
      : cron.schedule(job.expression, job.tick, { name: job.name, noOverlap: true, ...(job.unref ? { unref: true } : {}) })
  const { onReady, stop } = job
  if (onReady) {
    app.addHook('onReady', async () => {
      await onReady()
    })
  }
  app.addHook('onClose', async () => {
    await task?.destroy()
    await stop?.()
  })
}
