import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { Baselines, type BaselineFigure } from './baselines.js'
import { main } from './cleanup.js'
import { createBenchDatabase, type BenchDatabase } from './database.js'
import { log } from './load.js'
import type { CapacityRow } from './capacity.js'
import { printTables, type ResultRow } from './report.js'

/** State shared by the scenarios of one harness run: the token secret, baseline figures and the result rows. */
export class BenchContext {
  readonly jwtSecret = randomBytes(32).toString('hex')
  readonly baselines = new Baselines()
  readonly rows: ResultRow[] = []
  /** Findings worth a line under the table (service warnings, failed requests, CPU shares). */
  readonly notes: string[] = []
  /** What one instance and one database core serve, per endpoint class (bench/lib/capacity.ts). */
  readonly capacity: CapacityRow[] = []

  /** A fresh, migrated database for one scenario, dropped when the harness ends. */
  async database(): Promise<BenchDatabase> {
    const database = await createBenchDatabase()
    log(`database ${database.name} created and migrated`)
    return database
  }

  addRow(row: ResultRow): void {
    this.rows.push(row)
  }

  addCapacity(row: CapacityRow | null): void {
    if (row) this.capacity.push(row)
  }

  note(line: string): void {
    this.notes.push(line)
    log(`  note: ${line}`)
  }

  baselineFigures(): Promise<BaselineFigure[]> {
    return this.baselines.all()
  }
}

export type Scenario = (ctx: BenchContext) => Promise<void>

/** True when `moduleUrl` is the script Node was started with (tsx keeps argv[1] as the .ts path). */
export function isMain(moduleUrl: string): boolean {
  const entry = process.argv[1]
  return entry !== undefined && pathToFileURL(entry).href === moduleUrl
}

/** `npm run bench:<scenario>`: one scenario with its baselines, printed, nothing written. */
export async function runStandalone(scenario: Scenario): Promise<void> {
  await main(async () => {
    const ctx = new BenchContext()
    await scenario(ctx)
    printTables(ctx.rows, await ctx.baselineFigures(), ctx.notes, ctx.capacity)
  })
}
