/**
 * What the service counts, as plain calls made where an outcome is decided (login, refresh, a provider answer, a
 * webhook). plugins/platform/metrics.ts implements it over a prom-client registry; with SVC_METRICS=off every call is a no-op.
 * Label values are closed sets: never a URL, a tenant, a user or a message id.
 */
// `second_step`: a right password of a user with a second factor; the login completes (`ok`) or not at its second step.
export type LoginOutcome = 'ok' | 'second_step' | 'invalid' | 'locked' | 'refused'
/** An attempt's hand-over: sent (or resolved), refused, to be retried, or its group left open to be read back. */
export type ProviderOutcome = 'accepted' | 'rejected' | 'retryable' | 'unresolved'
/** A webhook attempt: a 2xx, a failure to be retried, the last failure, or not attempted (refused address). */
export type WebhookOutcome = 'delivered' | 'failed' | 'given_up' | 'refused'

export interface MetricsRecorder {
  login(outcome: LoginOutcome): void
  /** A login refused because the identity is locked after too many failures (AUTH_018 with a lock). */
  lockout(): void
  /** A refresh token presented again outside the grace window: the session was revoked (AUTH_016). */
  refreshReuse(): void
  providerCall(outcome: ProviderOutcome, seconds: number): void
  /** An attempt ended with recipients left and attempts to spare: the message goes back to PENDING with a delay. */
  retry(): void
  deliveryReports(processed: number, ignored: number): void
  webhookDelivery(outcome: WebhookOutcome): void
}

export const noMetrics: MetricsRecorder = {
  login: () => undefined,
  lockout: () => undefined,
  refreshReuse: () => undefined,
  providerCall: () => undefined,
  retry: () => undefined,
  deliveryReports: () => undefined,
  webhookDelivery: () => undefined,
}


/** How a login that threw ended, from the catalog code it answers with. */
export function failedLoginOutcome(error: unknown): LoginOutcome {
  const code = (error as { code?: unknown }).code
  if (code === 'AUTH_001' || code === 'MFA_CODE_INVALID') return 'invalid'
  if (code === 'AUTH_018') return 'locked'
  return 'refused'
}

/**
 * Runs a sign-in step and counts how it ended (`svc_auth_logins_total`, and a lockout): a thrown error by its catalog
 * code, a result by `outcomeOf`. Both steps of a login count here, so the series reads the same for either.
 */
export async function countedLogin<T>(
  metrics: MetricsRecorder,
  attempt: () => Promise<T>,
  outcomeOf: (result: T) => LoginOutcome = () => 'ok',
): Promise<T> {
  let result: T
  try {
    result = await attempt()
  } catch (error) {
    const failed = failedLoginOutcome(error)
    metrics.login(failed)
    if (failed === 'locked') metrics.lockout()
    throw error
  }
  metrics.login(outcomeOf(result))
  return result
}
