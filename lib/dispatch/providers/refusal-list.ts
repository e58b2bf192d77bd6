import type { CallFailure } from './provider.js'

/**
 * The provider's 080 refusal list (docs/provider.md#the-080-refusal-list): every recipient who called the
 * account's 080 number to refuse messages from one of its sender numbers, oldest first, paged by `nextKey`. Like
 * the SMS adapters, its readers never touch the database; lib/advertising/opt-out-sync.ts calls them between
 * transactions.
 */

export interface Refusal {
  /** The provider's key of the entry. */
  handleKey: string
  /** Digits: the sender number the recipient refused. */
  senderNumber: string
  /** Digits: who refused. */
  recipientNumber: string
  dateCreated: Date
}

export interface RefusalQuery {
  senderNumber: string
  /** dateCreated[gte]: refusals recorded at or after this instant; null: from the first. */
  since: Date | null
  /** The nextKey of the previous page; null: the first page. */
  startKey: string | null
  limit: number
}

export type RefusalPage = { kind: 'ok'; refusals: Refusal[]; nextKey: string | null } | CallFailure

export interface RefusalList {
  readonly name: 'mock' | 'extsms'
  readPage(query: RefusalQuery): Promise<RefusalPage>
}

/** The mock provider has no 080 service: its list is always empty. */
export function createMockRefusalList(): RefusalList {
  return {
    name: 'mock',
    async readPage() {
      return { kind: 'ok', refusals: [], nextKey: null }
    },
  }
}
