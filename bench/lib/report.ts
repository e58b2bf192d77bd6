import type { BaselineFigure } from './baselines.js'
import { CAPACITY_HEADER, capacityCells, type CapacityRow } from './capacity.js'

export interface ResultRow {
  scenario: string
  /** Throughput: req/s, or recipients/s for dispatch. */
  value: number
  unit: string
  p50?: number
  p99?: number
  baseline?: string
  baselineValue?: number
  ratio?: number
  target: string
  /** null: informational row without a target. */
  met: boolean | null
  notes?: string
}

export const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value) ? '-' : value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })

const ms = (value: number | undefined) => (value === undefined ? '-' : value < 10 ? fixed(value, 2) : fixed(value, 1))

function verdict(met: boolean | null): string {
  if (met === null) return 'info'
  return met ? 'yes' : 'NO'
}

const RESULT_HEADER = ['scenario', 'median of runs', 'p50 ms', 'p99 ms', 'baseline', 'baseline median', 'ratio', 'target', 'met?', 'notes']

function resultCells(row: ResultRow): string[] {
  return [
    row.scenario,
    `${fixed(row.value, row.value < 100 ? 1 : 0)} ${row.unit}`,
    ms(row.p50),
    ms(row.p99),
    row.baseline ?? '-',
    row.baselineValue === undefined ? '-' : fixed(row.baselineValue, row.baselineValue < 100 ? 1 : 0),
    row.ratio === undefined ? '-' : `${row.ratio.toFixed(2)} x`,
    row.target,
    verdict(row.met),
    row.notes ?? '',
  ]
}

const BASELINE_HEADER = ['baseline', 'median of runs', 'p50 ms', 'p99 ms', 'CPU (median run)']

function baselineCells(figure: BaselineFigure): string[] {
  return [figure.label, `${fixed(figure.rps, figure.rps < 100 ? 1 : 0)} ${figure.unit}`, ms(figure.p50), ms(figure.p99), figure.cpu ?? '-']
}

function markdownTable(header: string[], rows: string[][]): string {
  const escape = (cell: string) => cell.replaceAll('|', '\\|')
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((cells) => `| ${cells.map(escape).join(' | ')} |`),
  ].join('\n')
}

export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((cells) => cells[i]!.length)))
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n')
}

export function resultsMarkdown(rows: ResultRow[], baselines: BaselineFigure[], capacity: CapacityRow[] = []): string {
  return [
    markdownTable(RESULT_HEADER, rows.map(resultCells)),
    '',
    'Baselines (tiny standalone servers under bench/baselines/, same machine, same load generator, same run):',
    '',
    markdownTable(BASELINE_HEADER, baselines.map(baselineCells)),
    ...(capacity.length
      ? ['', 'Capacity (bench/lib/capacity.ts: the median run of each endpoint class; per core = req/s x 100 / CPU %):', '', markdownTable(CAPACITY_HEADER, capacity.map(capacityCells))]
      : []),
  ].join('\n')
}

export function printTables(rows: ResultRow[], baselines: BaselineFigure[], notes: string[], capacity: CapacityRow[] = []): void {
  const out = [
    '',
    textTable(RESULT_HEADER.slice(0, -1), rows.map((row) => resultCells(row).slice(0, -1))),
    '',
    textTable(BASELINE_HEADER, baselines.map(baselineCells)),
    '',
    ...(capacity.length ? [textTable(CAPACITY_HEADER, capacity.map(capacityCells)), ''] : []),
    ...rows.filter((row) => row.notes).map((row) => `${row.scenario}: ${row.notes}`),
    ...notes.map((note) => `note: ${note}`),
    '',
  ]
  console.log(out.join('\n'))
}
