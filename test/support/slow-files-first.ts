import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Test files that start processes of their own (tsx scripts, an embedded PostgreSQL, dispatch instances) and take
 * tens of seconds each.
 */
const CHILD_PROCESS_FILES = [/^test\/scripts\//, /^test\/embedded\.test\.ts$/, /^test\/db\/embedded-lock\.test\.ts$/, /^test\/dispatch\/leases\.test\.ts$/]

/**
 * Vitest orders files by their last durations, kept in node_modules; a fresh clone (every CI run) has none, so it
 * orders them by size, and the small files that start child processes came last: one worker ran the longest file
 * alone while the other sat idle. This starts them first in their project, whatever the cache holds.
 */
export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const slow = (spec: TestSpecification) => CHILD_PROCESS_FILES.some((pattern) => pattern.test(relative(spec.project.config.root, spec.moduleId)))
    // The base order runs projects one after another; reorder only within each project's stretch.
    const stretches: TestSpecification[][] = []
    for (const spec of sorted) {
      const last = stretches.at(-1)
      if (last && last[0]!.project.name === spec.project.name) last.push(spec)
      else stretches.push([spec])
    }
    return stretches.flatMap((stretch) => [...stretch.filter(slow), ...stretch.filter((spec) => !slow(spec))])
  }
}
