/** How much one run of a bounded maintenance step may do: `batch` rows per statement, at most `batches` statements. */
export interface BatchLimits {
  batch: number
  batches: number
}

/**
 * Runs `step(batch)` (one statement that handles at most `batch` rows and answers how many it handled) until it
 * handles fewer than `batch` or `batches` statements have run; returns the rows handled in all. Each statement is a
 * transaction of its own, so locks stay short and a backlog drains over several runs.
 */
export async function inBatches(limits: BatchLimits, step: (batch: number) => Promise<number>): Promise<number> {
  let handled = 0
  for (let run = 0; run < limits.batches; run++) {
    const done = await step(limits.batch)
    handled += done
    if (done < limits.batch) break
  }
  return handled
}
