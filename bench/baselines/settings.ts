/** The few settings a baseline server takes, from the environment the harness gives it. */
export function baselineSettings() {
  const port = Number(process.env.PORT)
  const jwtSecret = process.env.SVC_JWT_SECRET ?? ''
  if (!Number.isInteger(port) || port <= 0) throw new Error('PORT is required')
  if (jwtSecret.length < 32) throw new Error('SVC_JWT_SECRET (at least 32 bytes) is required')
  return {
    port,
    jwtSecret,
    issuer: process.env.SVC_JWT_ISSUER ?? 'svc-auth-svc',
    databaseUrl: process.env.DATABASE_URL,
    bcryptCost: Number(process.env.SVC_BCRYPT_COST ?? 10),
    poolMax: Number(process.env.SVC_DB_POOL_MAX ?? 10),
  }
}
