import { describe, expect, it } from 'vitest'
import { parseHistorySort } from '../../lib/sms/history-sort.js'

describe('parseHistorySort', () => {
  it.each([
    ['createdAt,desc', { field: 'createdAt', direction: 'desc' }],
    ['sentAt,asc', { field: 'sentAt', direction: 'asc' }],
    ['status,DESC', { field: 'status', direction: 'desc' }],
    ['status', { field: 'status', direction: 'asc' }],
  ])('reads %s', (sort, expected) => {
    expect(parseHistorySort(sort)).toEqual(expected)
  })
})
