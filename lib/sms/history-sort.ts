import type { HistorySort, HistorySortField } from '../../db/repos/sms/sms-history.js'

/**
 * `createdAt,desc` style (Spring's `sort=field,dir`). The schema has already restricted the field to the
 * allowed ones; a missing direction means ascending, as in Spring, and the direction's case does not matter.
 */
export function parseHistorySort(sort: string): HistorySort {
  const [field, direction] = sort.split(',')
  return {
    field: field as HistorySortField,
    direction: direction?.toLowerCase() === 'desc' ? 'desc' : 'asc',
  }
}
