import { createTenant } from './fixtures.js'
import { seedSenderSetting } from './sms-fixtures.js'

/** A new tenant whose sender number waits for the operator's approval (PENDING), as a registration leaves it. */
export async function createPendingSenderTenant() {
  const tenant = await createTenant()
  await seedSenderSetting(tenant, { senderNumber: '0212345678', registrationStatus: 'PENDING' })
  return tenant
}
