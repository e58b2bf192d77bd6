import { randomInt } from 'node:crypto'
import { createTenant } from '../support/fixtures.js'
import { seedSenderSetting } from './sms-fixtures.js'

/**
 * A Seoul number (02 and eight digits) no other test uses: a number APPROVED for one tenant cannot be approved for
 * another (SENDER_NUMBER_IN_USE), and the tests share one database.
 */
export function uniqueSenderNumber(): string {
  return `02${randomInt(20_000_000, 100_000_000)}`
}

/** A new tenant whose sender number (unique, digits) waits for the operator's approval (PENDING), as a registration leaves it. */
export async function createPendingSenderTenant() {
  const tenant = await createTenant()
  const senderNumber = uniqueSenderNumber()
  await seedSenderSetting(tenant, { senderNumber, registrationStatus: 'PENDING' })
  return { ...tenant, senderNumber }
}
