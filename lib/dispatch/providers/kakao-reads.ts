import type { KakaoTemplateStatus } from '../../../db/schema.js'
import type { CallFailure } from './provider.js'

/**
 * The provider's Kakao reads (docs/provider.md#kakao-reads): the business channel a pfId names and an inspected
 * template. Like the SMS adapters, they never touch the database; callers run them between transactions.
 */

export interface KakaoChannel {
  /** The provider's channelId. */
  pfId: string
  searchId: string
}

export interface KakaoTemplate {
  templateId: string
  /** The channel the template was written for. */
  channelId: string
  name: string
  content: string
  status: KakaoTemplateStatus
  /** As the provider gave them ([] when it gave none). */
  buttons: unknown[]
}

/** `unknown`: the provider answered that it has no such channel or template (404). */
export type KakaoRead<T> = { kind: 'found'; value: T } | { kind: 'unknown' } | CallFailure

export interface KakaoReads {
  readonly name: 'mock' | 'extsms'
  readChannel(pfId: string): Promise<KakaoRead<KakaoChannel>>
  readTemplate(templateId: string): Promise<KakaoRead<KakaoTemplate>>
}

export const KAKAO_TEMPLATE_STATUSES = ['PENDING', 'INSPECTING', 'APPROVED', 'REJECTED'] as const satisfies readonly KakaoTemplateStatus[]
