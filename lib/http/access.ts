import type { Role } from '../../db/schema.js'
import { isApiKeyScope, type ApiKeyScope } from '../api-keys/scopes.js'
import type { ErrorCode } from '../errors.js'

/** The roles of every route for staff (`access: 'staff'`). */
export const STAFF_ROLES: readonly Role[] = ['OWNER', 'MANAGER', 'INSTRUCTOR']

/** Who may call a route. */
export type Audience =
  /** Anyone: no credential is read (probes, documentation, login and registration). */
  | 'public'
  /** Any signed-in user of an ACTIVE tenant, by access token (Bearer or cookie). */
  | 'user'
  /** A signed-in OWNER, MANAGER or INSTRUCTOR. */
  | 'staff'
  /** A signed-in OWNER. */
  | 'owner'
  /** Signed-in users of these roles. */
  | { roles: readonly Role[] }
  /** An operations call signed with SVC_INTERNAL_HMAC_SECRET over its raw body (plugins/platform/internal-signature.ts). */
  | 'internal-signed'
  /** The SMS provider's delivery reports, by X-Provider-Secret (plugins/dispatch/provider-callback.ts). */
  | 'provider-callback'
  /** The holder of a refresh cookie (POST /v1/refresh checks the token itself). */
  | 'refresh-cookie'
  /** The holder of the mfa cookie of a login's second step (lib/sign-in/login-second-step.ts checks the token). */
  | 'mfa-cookie'
  /** A scraper with SVC_METRICS_TOKEN (plugins/platform/metrics.ts checks it). */
  | 'metrics-token'

/** The per-address budget shared by login, registration and password changes; the value is the code beyond it. */
export type AddressBudgetCode = Extract<ErrorCode, 'AUTH_018' | 'RATE_LIMITED'>

/**
 * A route's `config.access`: its audience; whether each request also counts against the per-address budget; and the
 * API key scope that admits a key to it (lib/api-keys/scopes.ts). A route that names no scope refuses every key
 * (403 API_KEY_SCOPE): keys reach only what a scope names.
 */
export type Access =
  | Audience
  | { audience: Audience; addressBudget: AddressBudgetCode; apiKeyScope?: never }
  | { audience: Audience; apiKeyScope: ApiKeyScope; addressBudget?: never }

/** How the caller proves who it is. */
export type Credential =
  | 'none'
  | 'access-token'
  | 'refresh-cookie'
  | 'mfa-token'
  | 'internal-signature'
  | 'provider-secret'
  | 'metrics-token'

/** Everything the plugins derive from a route's access: each reads its own part, and nothing else decides it. */
export interface AccessPolicy {
  readonly audience: Audience
  readonly credential: Credential
  /** Roles admitted, read from the access token; null when any signed-in user (or no user) is admitted. */
  readonly roles: readonly Role[] | null
  /** The handler runs in a tenant transaction (plugins/platform/tenant-tx.ts): the tenant comes from the credential. */
  readonly tenantTransaction: boolean
  /**
   * The cookie whose presence makes an unsafe request subject to the origin check (plugins/platform/csrf.ts): a cookie is
   * what a cross-site page can ride on. Null where no cookie authenticates.
   */
  readonly csrfCookie: 'access' | 'refresh' | 'mfa' | null
  readonly addressBudget: AddressBudgetCode | null
  /** The scope an API key needs here; null: keys are refused (403 API_KEY_SCOPE). Only with an access token. */
  readonly apiKeyScope: ApiKeyScope | null
  /** The refusals this policy's plugins can answer, for the OpenAPI document (lib/openapi/problem-codes.ts). */
  readonly problems: readonly ErrorCode[]
}

// The access token is read, then the request scope statement refuses a revoked token or an inactive tenant or user.
// An API key where the route names no scope, or another scope, is refused.
const TOKEN_PROBLEMS: readonly ErrorCode[] = ['AUTH_002', 'AUTH_003', 'AUTH_004', 'AUTH_010', 'AUTH_015', 'API_KEY_SCOPE']

const CREDENTIAL_OF: Record<Exclude<Audience, { roles: readonly Role[] }>, Credential> = {
  public: 'none',
  user: 'access-token',
  staff: 'access-token',
  owner: 'access-token',
  'internal-signed': 'internal-signature',
  'provider-callback': 'provider-secret',
  'refresh-cookie': 'refresh-cookie',
  'mfa-cookie': 'mfa-token',
  'metrics-token': 'metrics-token',
}

const PROBLEMS_OF: Record<Credential, readonly ErrorCode[]> = {
  none: [],
  'access-token': TOKEN_PROBLEMS,
  'refresh-cookie': [],
  'mfa-token': ['MFA_TOKEN_INVALID'],
  'internal-signature': ['INTERNAL_SIGNATURE_INVALID', 'TENANT_MISMATCH', 'TENANT_NOT_FOUND'],
  'provider-secret': ['WEBHOOK_SECRET_INVALID'],
  'metrics-token': [],
}

// The cookie a browser would attach by itself, per credential: what a cross-site page could ride on.
const CSRF_COOKIE_OF: Partial<Record<Credential, AccessPolicy['csrfCookie']>> = {
  'access-token': 'access',
  'refresh-cookie': 'refresh',
  'mfa-token': 'mfa',
}

function rolesOf(audience: Audience): readonly Role[] | null {
  if (typeof audience === 'object') return audience.roles
  if (audience === 'staff') return STAFF_ROLES
  if (audience === 'owner') return ['OWNER']
  return null
}

function audienceIsValid(audience: unknown): audience is Audience {
  if (typeof audience === 'string') return Object.hasOwn(CREDENTIAL_OF, audience)
  if (typeof audience !== 'object' || audience === null || Object.keys(audience).join() !== 'roles') return false
  const roles = (audience as { roles: unknown }).roles
  return Array.isArray(roles) && roles.length > 0 && roles.every((role) => typeof role === 'string')
}

const KEY_ROLES: readonly Role[] = ['OWNER', 'MANAGER']

/** Turns a route's `access` into its policy; throws (failing the start) when the value is not a known access. */
export function resolveAccess(access: unknown): AccessPolicy {
  const wrapped = typeof access === 'object' && access !== null && 'audience' in access
  const audience = wrapped ? (access as { audience: unknown }).audience : access
  const addressBudget = wrapped ? ((access as { addressBudget?: unknown }).addressBudget ?? null) : null
  const apiKeyScope = wrapped ? ((access as { apiKeyScope?: unknown }).apiKeyScope ?? null) : null
  const extraKeys = wrapped ? Object.keys(access).filter((key) => !['audience', 'addressBudget', 'apiKeyScope'].includes(key)) : []
  if (
    !audienceIsValid(audience) ||
    extraKeys.length > 0 ||
    (wrapped && (addressBudget === null) === (apiKeyScope === null)) ||
    (addressBudget !== null && addressBudget !== 'AUTH_018' && addressBudget !== 'RATE_LIMITED') ||
    (apiKeyScope !== null && !isApiKeyScope(apiKeyScope))
  ) {
    throw new TypeError(`not an access policy: ${JSON.stringify(access)}`)
  }
  const credential = typeof audience === 'object' ? 'access-token' : CREDENTIAL_OF[audience]
  const roles = rolesOf(audience)
  // A key acts as its creator, who must be an OWNER or MANAGER (the database refuses the key otherwise) and whose
  // role this instance may have read before a change between the two: a route that admits keys admits both.
  if (apiKeyScope !== null && (credential !== 'access-token' || !KEY_ROLES.every((role) => roles?.includes(role) ?? true))) {
    throw new TypeError(`an API key scope needs a route for signed-in OWNERs and MANAGERs: ${JSON.stringify(access)}`)
  }
  const problems: ErrorCode[] = [...PROBLEMS_OF[credential]]
  if (roles) problems.push('AUTH_008')
  if (addressBudget) problems.push(addressBudget)
  if (apiKeyScope) problems.push('RATE_LIMITED')
  return {
    audience,
    credential,
    roles,
    tenantTransaction: credential === 'access-token' || credential === 'internal-signature',
    csrfCookie: CSRF_COOKIE_OF[credential] ?? null,
    addressBudget: (addressBudget as AddressBudgetCode | null) ?? null,
    apiKeyScope: apiKeyScope as ApiKeyScope | null,
    problems,
  }
}

/** What a request that matched no route gets: nothing is read, and the not-found handler answers. */
export const UNROUTED: AccessPolicy = resolveAccess('public')

const resolved = new WeakMap<object, AccessPolicy>()

/**
 * The policy of the route a request matched, from its `config` (resolved once per route). A request that matched no
 * route has no `access`: it reads nothing. Every route declares one (plugins/platform/access.ts fails the start otherwise).
 */
export function policyOf(config: { access?: Access }): AccessPolicy {
  let policy = resolved.get(config)
  if (!policy) {
    policy = config.access === undefined ? UNROUTED : resolveAccess(config.access)
    resolved.set(config, policy)
  }
  return policy
}
