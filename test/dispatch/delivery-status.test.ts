import { describe, expect, it } from 'vitest'
import {
  aggregateStatus,
  deliveryStatusForCode,
  nextDeliveryStatus,
  type DeliveryStatus,
} from '../../lib/dispatch/delivery/delivery-status.js'

describe('deliveryStatusForCode', () => {
  it.each([
    ['2000', 'DISPATCHED'],
    ['3000', 'DISPATCHED'],
    ['4000', 'DELIVERED'],
    ['1062', 'FAILED'],
    ['2062', 'FAILED'],
    ['3043', 'FAILED'],
    ['', 'FAILED'],
    ['unknown', 'FAILED'],
  ])('maps %j to %s', (code, status) => {
    expect(deliveryStatusForCode(code)).toBe(status)
  })
})

describe('nextDeliveryStatus', () => {
  it.each<[DeliveryStatus, DeliveryStatus, DeliveryStatus | null]>([
    ['PENDING', 'DISPATCHED', 'DISPATCHED'],
    ['PENDING', 'DELIVERED', 'DELIVERED'],
    ['DISPATCHED', 'DELIVERED', 'DELIVERED'],
    ['DISPATCHED', 'FAILED', 'FAILED'],
    ['DISPATCHED', 'DISPATCHED', null],
    ['DISPATCHED', 'PENDING', null],
    ['DELIVERED', 'FAILED', null],
    ['FAILED', 'DELIVERED', null],
    ['DELIVERED', 'DISPATCHED', null],
    ['CANCELLED', 'DELIVERED', null],
  ])('moves %s on %s to %s', (current, incoming, expected) => {
    expect(nextDeliveryStatus(current, incoming)).toBe(expected)
  })
})

describe('aggregateStatus', () => {
  it('is undecided while any recipient is PENDING or DISPATCHED', () => {
    expect(aggregateStatus({ DELIVERED: 3, PENDING: 1 })).toBeNull()
    expect(aggregateStatus({ FAILED: 3, DISPATCHED: 1 })).toBeNull()
  })

  it('is SENT when every recipient is DELIVERED', () => {
    expect(aggregateStatus({ DELIVERED: 5 })).toBe('SENT')
    expect(aggregateStatus({ DELIVERED: 5, FAILED: 0, PENDING: 0 })).toBe('SENT')
  })

  it('is FAILED when no recipient is DELIVERED', () => {
    expect(aggregateStatus({ FAILED: 2 })).toBe('FAILED')
    expect(aggregateStatus({ FAILED: 1, CANCELLED: 1 })).toBe('FAILED')
  })

  it('is PARTIAL when some but not all are DELIVERED', () => {
    expect(aggregateStatus({ DELIVERED: 1, FAILED: 1 })).toBe('PARTIAL')
  })

  it('counts CANCELLED recipients as not delivered', () => {
    expect(aggregateStatus({ DELIVERED: 2, CANCELLED: 1 })).toBe('PARTIAL')
  })

  it('is CANCELLED when every recipient is CANCELLED', () => {
    expect(aggregateStatus({ CANCELLED: 4 })).toBe('CANCELLED')
  })

  it('is undecided with no recipients', () => {
    expect(aggregateStatus({})).toBeNull()
  })
})
