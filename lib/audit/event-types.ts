/**
 * What an audit event's target is: the user for sign-in and account events, otherwise the thing that changed.
 * Each event type has exactly one (TARGET_OF), so a reader can filter or link by it without guessing.
 */
export type AuditTargetType =
  | 'USER'
  | 'SESSION'
  | 'SMS_MESSAGE'
  | 'SMS_TEMPLATE'
  | 'RECIPIENT_GROUP'
  | 'SENDER_SETTING'
  | 'OPT_OUT'
  | 'ADVERTISING_SETTINGS'
  | 'WEBHOOK_ENDPOINT'

/** Every event type the log records, with its target type. Adding a type here is what makes it readable and filterable. */
export const TARGET_OF = {
  LOGIN_SUCCEEDED: 'USER',
  LOGIN_FAILED: 'USER',
  LOGIN_LOCKED: 'USER',
  PASSWORD_CHANGED: 'USER',
  PASSWORD_RESET: 'USER',
  PHONE_VERIFIED: 'USER',
  PHONE_CHANGED: 'USER',
  MFA_ENABLED: 'USER',
  MFA_DISABLED: 'USER',
  RECOVERY_CODES_REGENERATED: 'USER',
  SESSION_REVOKED: 'SESSION',
  USER_CREATED: 'USER',
  USER_DELETED: 'USER',
  LOGIN_ID_CHANGED: 'USER',
  SENDER_SETTING_CHANGED: 'SENDER_SETTING',
  SENDER_SETTING_APPROVED: 'SENDER_SETTING',
  SENDER_SETTING_REJECTED: 'SENDER_SETTING',
  SMS_ACCEPTED: 'SMS_MESSAGE',
  SMS_CANCELLED: 'SMS_MESSAGE',
  TEMPLATE_CREATED: 'SMS_TEMPLATE',
  TEMPLATE_UPDATED: 'SMS_TEMPLATE',
  TEMPLATE_DELETED: 'SMS_TEMPLATE',
  RECIPIENT_GROUP_CREATED: 'RECIPIENT_GROUP',
  OPT_OUT_ADDED: 'OPT_OUT',
  OPT_OUT_REMOVED: 'OPT_OUT',
  ADVERTISING_SETTINGS_CHANGED: 'ADVERTISING_SETTINGS',
  WEBHOOK_ENDPOINT_CHANGED: 'WEBHOOK_ENDPOINT',
} as const satisfies Record<string, AuditTargetType>

export type AuditEventType = keyof typeof TARGET_OF

export const AUDIT_EVENT_TYPES = Object.keys(TARGET_OF) as AuditEventType[]
